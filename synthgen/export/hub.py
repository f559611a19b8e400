"""Upload an exported dataset folder to the Hugging Face Hub with `huggingface_hub`.

The folder is uploaded as it is on disk (what `datasets.load_dataset(folder)` reads is what the
Hub serves); Parquet files of an earlier export that this one no longer has (under data/, chains/
and kept/, or a trainer format's train/test files) are deleted in the same commit, so a config
never mixes two exports, whatever format each was. Failures map to exit
codes: no login, a refused or unknown repository, offline mode -> exit 2 (fix and re-run);
the Hub unreachable or failing (network, 5xx) -> exit 3, the folder stays written and a re-run
with --push-to-hub retries the upload.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.errors import InfraIncomplete, UserError

DELETE_STALE = ["data/**", "chains/**", "kept/**", "*.parquet"]
_NETWORK_MODULES = {"httpx", "httpx2", "httpcore", "requests", "urllib3", "aiohttp"}


def check_login() -> None:
    """Refuse before any work when no Hub token is configured (HF_TOKEN or `hf auth login`)."""
    from huggingface_hub import get_token

    if not get_token():
        raise UserError("--push-to-hub needs a Hugging Face login: run `hf auth login` or set HF_TOKEN")


def push(folder: Path, repo_id: str, *, private: bool, message: str) -> str:
    """Create the dataset repository if needed and upload `folder` to it; returns the repository URL."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled

    api = HfApi()
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="dataset",
            commit_message=message,
            delete_patterns=DELETE_STALE,
        )
    except OfflineModeIsEnabled:
        raise UserError(
            f"cannot push to {repo_id}: HF_HUB_OFFLINE is set (unset it to upload; {folder} is written)"
        ) from None
    except LocalTokenNotFoundError:
        raise UserError("--push-to-hub needs a Hugging Face login: run `hf auth login` or set HF_TOKEN") from None
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None) if getattr(exc, "response", None) is not None else None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if status is not None and status >= 500:
            raise InfraIncomplete(
                f"the Hub failed ({first}); {folder} is written, re-run to retry the upload"
            ) from None
        raise UserError(f"the Hub refused the upload to {repo_id}: {first}") from None
    except Exception as exc:
        if not (isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _NETWORK_MODULES):
            raise
        raise InfraIncomplete(
            f"cannot reach the Hub ({type(exc).__name__}: {exc}); {folder} is written, re-run to retry the upload"
        ) from None
    return str(url)
