# Stowage's safetensors against the safetensors package (issue 17 item 4),
# run by bench/peers/safetensors_check in its virtual environment:
#   safetensors_check.py STOWAGE_FILE RESAVED_FILE MODEL_PROFILE
# 1. Loads the file Stowage exported with safetensors.numpy.load_file.
# 2. Checks its names and shapes are exactly LlamaForCausalLM's for the
#    profile, every tensor F32, metadata "format": "pt".
# 3. Checks each loaded array equals the bytes at the header's offsets,
#    read independently of the package.
# 4. Saves the loaded arrays again with safetensors.numpy.save_file, for the
#    caller to train from (Stowage must read back the same tensors).
import json
import struct
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file


def profile_numbers(path):
    # The model profile is flat YAML of "key: value" lines; no parser needed.
    values = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0]
        if ":" in line and not line.startswith(" "):
            key, value = line.split(":", 1)
            values[key.strip()] = value.strip()
    return values


def expected_shapes(p):
    d, layers, heads = int(p["d_model"]), int(p["layers"]), int(p["heads"])
    kv = int(p.get("kv_heads", heads))
    hd = int(p.get("head_dim", d // heads))
    ffn, vocab = int(p["ffn"]), int(p["vocab"])
    shapes = {"model.embed_tokens.weight": (vocab, d), "model.norm.weight": (d,), "lm_head.weight": (vocab, d)}
    for n in range(layers):
        q = f"model.layers.{n}."
        shapes.update({
            q + "input_layernorm.weight": (d,),
            q + "self_attn.q_proj.weight": (heads * hd, d),
            q + "self_attn.k_proj.weight": (kv * hd, d),
            q + "self_attn.v_proj.weight": (kv * hd, d),
            q + "self_attn.o_proj.weight": (d, heads * hd),
            q + "post_attention_layernorm.weight": (d,),
            q + "mlp.gate_proj.weight": (ffn, d),
            q + "mlp.up_proj.weight": (ffn, d),
            q + "mlp.down_proj.weight": (d, ffn),
        })
    return shapes


def raw_tensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        assert t["dtype"] == "F32", f"{name}: dtype {t['dtype']} (F32 expected)"
        out[name] = np.frombuffer(body[begin:end], dtype="<f4").reshape(t["shape"])
    return out


def main():
    stowage_file, resaved_file, profile = sys.argv[1:4]
    problems = []
    tensors = load_file(stowage_file)
    with safe_open(stowage_file, framework="numpy") as f:
        metadata = f.metadata()
    if (metadata or {}).get("format") != "pt":
        problems.append(f"metadata {metadata} (format 'pt' expected, as transformers requires)")
    want = expected_shapes(profile_numbers(profile))
    for name in sorted(set(want) - set(tensors)):
        problems.append(f"missing {name}")
    for name in sorted(set(tensors) - set(want)):
        problems.append(f"unexpected {name}")
    raw = raw_tensors(stowage_file)
    for name, array in sorted(tensors.items()):
        if name in want and array.shape != want[name]:
            problems.append(f"{name}: shape {array.shape} ({want[name]} expected)")
        if array.dtype != np.float32:
            problems.append(f"{name}: dtype {array.dtype} (float32 expected)")
        if not np.array_equal(array.view(np.uint32), raw[name].view(np.uint32)):
            problems.append(f"{name}: the package's values differ from the file's bytes")
    elements = sum(a.size for a in tensors.values())
    print(f"safetensors {__import__('safetensors').__version__} loaded {len(tensors)} tensors, "
          f"{elements} parameters, from {stowage_file}")
    for p in problems:
        print("problem:", p)
    save_file(tensors, resaved_file, metadata=metadata)
    sys.exit(1 if problems else 0)


main()
