#!/usr/bin/env bash
# One-shot device check for the sandbox bench: a quiet machine, pinned to 2 cores.
cd "$(dirname "$0")/.."
echo "== host"; uname -r; nproc; id -u; cat /etc/os-release 2>/dev/null | head -2; ls -la /usr/bin/python3 2>&1
cat /proc/sys/user/max_user_namespaces 2>&1; cat /proc/sys/kernel/unprivileged_userns_clone 2>&1
uptime
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3)
echo "python: $PY $($PY --version 2>&1)"
if ! command -v bwrap >/dev/null; then
  mkdir -p /tmp/bw && for d in .devcheck-sandbox/*.deb; do dpkg-deb -x "$d" /tmp/bw 2>/dev/null || (cd /tmp/bw && ar x "$OLDPWD/$d" && tar xf data.tar.* ); done
  export PATH=/tmp/bw/usr/bin:$PATH LD_LIBRARY_PATH=/tmp/bw/usr/lib/x86_64-linux-gnu:/tmp/bw/lib/x86_64-linux-gnu
  ls -la /tmp/bw/usr/bin/bwrap; ldd /tmp/bw/usr/bin/bwrap
fi
# bwrap runs as uid 65534: it must be able to exec the binary and read this tree's sandbox files (copied to /tmp anyway)
chmod -R a+rX /tmp/bw 2>/dev/null; chmod a+rx /tmp 2>/dev/null
echo "== probe"
timeout 60 $PY -c "
from synthgen.sandbox import isolation as iso
for lvl in ('bwrap', 'setuid-netns'):
    try:
        print(lvl, iso.choose(lvl, False).level, 'ok')
    except Exception as e:
        print(lvl, 'FAIL', e)
" 2>&1 | tail -5
echo "== bench (taskset 2 cores)"
for i in 1 2; do
  timeout 200 taskset -c 0,1 $PY bench/sandbox.py --jobs ${JOBS:-10000} --baseline-jobs 300 2>&1 | tail -8
  echo "rc=$?"
done
cp -r /dev/null $OUT/done 2>/dev/null; true
