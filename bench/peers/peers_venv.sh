# Sourced by bench/peers/adam and bench/peers/nvme: the peers' virtual
# environment under the build folder (never a product dependency, never in
# CI), made on first use with torch and deepspeed from the package index.
# Sets BUILD_DIR (default build/dev) and PEERS_PYTHON.
BUILD_DIR=${BUILD_DIR:-build/dev}
peers_venv="$BUILD_DIR/peers-venv"
if [ ! -x "$peers_venv/bin/python" ] || ! "$peers_venv/bin/python" -c "import torch, deepspeed" 2>/dev/null; then
  echo "bench/peers: creating $peers_venv with torch and deepspeed (a few GiB, once)" >&2
  python3 -m venv "$peers_venv"
  "$peers_venv/bin/pip" install -q torch deepspeed
fi
PEERS_PYTHON="$peers_venv/bin/python"
