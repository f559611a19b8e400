"""Checks that a table read from disk is what its schema says, before any stage trusts it.

Every reader of stage output goes through `read_checked`: each Parquet file is checked on its
own (so the message names the file and the column), then conformed to the spec's schema, so
parts with mixed schemas never meet in a concat. What is checked:

- every required column is there (all non-nullable ones, plus a few a stage cannot do without,
  such as `pass_rate`); optional columns that are absent become nulls;
- each column's type is the declared one or a lossless relative (int32 for int16 when the values
  fit, large_string for string, ...); a string pass rate is a wrong type, never parsed;
- no nulls in non-nullable columns, no NaN and nothing outside [0, 1] in fraction columns, and
  only known values in enumerated columns (environment names, chain levels);
- the schema version in the file's metadata, when present, is one this synthgen reads (the
  current one, or an older one whose missing columns read as null).

Any failure is a one-line `UserError` (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from synthgen.errors import UserError
from synthgen.settings.base import ENV_NAMES
from synthgen.store.records import (
    CHAIN_LINKS,
    PROBLEMS,
    READABLE_VERSIONS,
    REJECTS_EXTRA,
    SCHEMA_VERSION,
    SEEDS,
    with_fields,
)

META_PREFIX = "synthgen."
LEVELS = ("hard", "medium", "easy")


@dataclass(frozen=True)
class TableSpec:
    """A schema plus the rules a table of it must follow when it is read back."""

    name: str  # in messages: "not a synthgen <name> table"
    schema: pa.Schema
    required: frozenset[str]  # columns that must be present
    not_null: frozenset[str]  # columns that must not hold nulls
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fractions: frozenset[str] = frozenset()  # float columns in [0, 1], never NaN

    def columns(self, columns: Sequence[str] | None) -> list[str]:
        if columns is None:
            return list(self.schema.names)
        unknown = [c for c in columns if c not in self.schema.names]
        if unknown:  # a programming error, not bad input
            raise ValueError(f"{self.name} tables have no column {unknown[0]!r}")
        return list(dict.fromkeys(columns))


def strict(
    name: str, schema: pa.Schema, *, also_required: Sequence[str] = (), enums=None, fractions: Sequence[str] = ()
) -> TableSpec:
    """A spec for tables synthgen writes: every non-nullable column must be there, without nulls."""
    not_null = frozenset(f.name for f in schema if not f.nullable)
    return TableSpec(
        name, schema, not_null | frozenset(also_required), not_null, dict(enums or {}), frozenset(fractions)
    )


def problems_like(name: str, schema: pa.Schema) -> TableSpec:
    """PROBLEMS or PROBLEMS plus columns: a stage cannot judge a problem without these."""
    return strict(
        name,
        schema,
        also_required=("problem_id", "code", "pass_rate"),
        enums={"env": ENV_NAMES},
        fractions=("pass_rate", "pass_rate_low", "pass_rate_high", "mutation_score", "prior_pass_rate", "chance_rate"),
    )


SEEDS_SPEC = strict("seeds", SEEDS)
PROBLEMS_SPEC = problems_like("problems", PROBLEMS)
BINNED_SPEC = problems_like("binned problems", with_fields(PROBLEMS, [pa.field("difficulty", pa.string())]))
REJECTS_SPEC = problems_like("rejected problems", with_fields(PROBLEMS, REJECTS_EXTRA))
DISJOINT_SPEC = problems_like(
    "disjoint baseline", with_fields(PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
)
CHAIN_LINKS_SPEC = strict(
    "chain links", CHAIN_LINKS, enums={"env": ENV_NAMES, "level": LEVELS}, fractions=("pass_rate",)
)
# Training reads problems from anywhere (real problem sets in this schema too): only what scoring needs.
TRAINING_SPEC = TableSpec(
    "problems",
    BINNED_SPEC.schema,
    frozenset({"env", "code"}),
    frozenset({"env"}),
    {"env": ENV_NAMES},
    frozenset({"pass_rate"}),
)


# -- types ------------------------------------------------------------------------------------------
def compatible(got: pa.DataType, want: pa.DataType) -> bool:
    """Can `got` be cast to `want` without changing what the values mean?"""
    if got == want or pa.types.is_null(got):
        return True
    if pa.types.is_dictionary(got):
        return compatible(got.value_type, want)
    if pa.types.is_integer(want):
        return pa.types.is_integer(got)
    if pa.types.is_floating(want):
        return pa.types.is_floating(got) or pa.types.is_integer(got)
    if pa.types.is_string(want):
        return pa.types.is_string(got) or pa.types.is_large_string(got) or str(got) == "string_view"
    if pa.types.is_boolean(want):
        return pa.types.is_boolean(got)
    if pa.types.is_list(want):
        is_list = pa.types.is_list(got) or pa.types.is_large_list(got) or pa.types.is_fixed_size_list(got)
        return is_list and compatible(got.value_type, want.value_type)
    return False


def check_schema(schema: pa.Schema, spec: TableSpec, path: Path, columns: Sequence[str] | None = None) -> None:
    """Column presence and types of one file, from its footer (no data read)."""
    version = file_metadata_of(schema).get("schema_version")
    if version is not None and version not in READABLE_VERSIONS:
        readable = ", ".join(READABLE_VERSIONS)
        raise UserError(
            f"{path} has schema version {version}; this synthgen reads versions {readable} (writes {SCHEMA_VERSION})"
        )
    for name in spec.columns(columns):
        if name not in schema.names:
            if name in spec.required:
                raise UserError(f"{path} has no column {name!r}: not a synthgen {spec.name} table")
            continue
        got, want = schema.field(name).type, spec.schema.field(name).type
        if not compatible(got, want):
            raise UserError(f"{path}: column {name!r} is {got}, expected {want} (a synthgen {spec.name} table)")


def file_metadata_of(schema: pa.Schema) -> dict[str, str]:
    """The synthgen.* metadata of a schema, without the prefix."""
    items = ((k.decode(errors="replace"), v.decode(errors="replace")) for k, v in (schema.metadata or {}).items())
    return {k.removeprefix(META_PREFIX): v for k, v in items if k.startswith(META_PREFIX)}


# -- values -----------------------------------------------------------------------------------------
def _first(mask: pa.ChunkedArray | pa.Array) -> int:
    """Index of the first true entry of a boolean array (nulls count as false)."""
    return pc.index(pc.fill_null(mask, False), True).as_py()


def output_schema(spec: TableSpec, names: Sequence[str]) -> pa.Schema:
    """The spec's fields `names`, nullable exactly where the spec allows nulls."""
    return pa.schema([pa.field(n, spec.schema.field(n).type, nullable=n not in spec.not_null) for n in names])


def conform(table: pa.Table, spec: TableSpec, path: Path | str, columns: Sequence[str] | None = None) -> pa.Table:
    """`table` as exactly the spec's schema (or its `columns`), its values checked."""
    names = spec.columns(columns)
    arrays = []
    for name in names:
        want = spec.schema.field(name).type
        if name not in table.column_names:
            arrays.append(pa.nulls(table.num_rows, want))
            continue
        column = table.column(name)
        try:
            if pa.types.is_dictionary(column.type):
                column = column.cast(column.type.value_type)
            arrays.append(column.cast(want, safe=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise UserError(f"{path}: column {name!r} does not fit {want}: {str(exc).splitlines()[0]}") from None
    loose = pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(n, spec.schema.field(n).type) for n in names]))
    check_values(loose, spec, path)
    return loose.cast(output_schema(spec, names))


def check_values(table: pa.Table, spec: TableSpec, path: Path | str) -> None:
    for name in table.column_names:
        column = table.column(name)
        if name in spec.not_null and column.null_count:
            row = _first(pc.is_null(column))
            raise UserError(f"{path}: column {name!r} is null in row {row}, which it must not be")
        if name in spec.fractions and len(column):
            nan = pc.is_nan(column)
            if pc.any(pc.fill_null(nan, False)).as_py():
                raise UserError(
                    f"{path}: column {name!r} is NaN in row {_first(nan)}; a pass rate is a number in [0, 1]"
                )
            outside = pc.or_(pc.less(column, 0.0), pc.greater(column, 1.0))
            if pc.any(pc.fill_null(outside, False)).as_py():
                row = _first(outside)
                raise UserError(f"{path}: column {name!r} is {column[row].as_py()} in row {row}, outside [0, 1]")
        if name in spec.enums and len(column):
            known = pa.array(spec.enums[name], pa.string())
            unknown = pc.invert(pc.is_in(column, value_set=known))
            unknown = pc.and_(unknown, pc.is_valid(column))
            if pc.any(unknown).as_py():
                row = _first(unknown)
                raise UserError(
                    f"{path}: column {name!r} holds unknown value {column[row].as_py()!r} in row {row} "
                    f"(known: {', '.join(spec.enums[name])})"
                )


# -- files ------------------------------------------------------------------------------------------
@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """A missing or corrupt file, read in the block, as a one-line UserError naming it."""
    try:
        yield
    except FileNotFoundError:
        raise UserError(f"file not found: {path}") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise UserError(f"cannot read Parquet file {path}: {str(exc).splitlines()[0]}") from None


def read_schema(path: Path) -> pa.Schema:
    """A file's Arrow schema (footer only)."""
    with _reading(path):
        return pq.read_schema(path)


def read_file(path: Path, spec: TableSpec, columns: Sequence[str] | None = None) -> pa.Table:
    """One Parquet file, checked against `spec` and conformed to it."""
    schema = read_schema(path)
    check_schema(schema, spec, path, columns)
    present = [c for c in spec.columns(columns) if c in schema.names]
    with _reading(path):
        table = pq.ParquetFile(path).read(columns=present)
    return conform(table, spec, path, columns)


def read_checked(paths: Sequence[Path], spec: TableSpec, columns: Sequence[str] | None = None) -> pa.Table:
    """Every file checked and conformed on its own, then concatenated (no files: an empty table)."""
    schema = output_schema(spec, spec.columns(columns))
    tables = [read_file(p, spec, columns) for p in paths]
    if not tables:
        return schema.empty_table()
    return pa.concat_tables([t.cast(schema) if t.schema != schema else t for t in tables])


def count_rows(paths: Sequence[Path], spec: TableSpec | None) -> int:
    """Rows in the files, from their footers, each file's schema checked against `spec`."""
    total = 0
    for path in paths:
        if spec is not None:
            check_schema(read_schema(path), spec, path)
        with _reading(path):
            total += pq.ParquetFile(path).metadata.num_rows
    return total


def read_parts(parts: Sequence[Path], spec: TableSpec | None, columns: Sequence[str] | None = None) -> pa.Table:
    """Files as one table: checked against `spec`, or (no spec: a folder of anything) concatenated as they are."""
    if spec is not None:
        return read_checked(parts, spec, columns)
    tables = []
    for path in parts:
        with _reading(path):
            tables.append(pq.ParquetFile(path).read(columns=list(columns) if columns else None))
    if not tables:
        raise UserError("no Parquet files to read")
    try:
        return pa.concat_tables(tables, promote_options="default")
    except pa.ArrowInvalid as exc:
        first = str(exc).splitlines()[0]
        raise UserError(f"Parquet files in {parts[0].parent} do not share a schema: {first}") from None
