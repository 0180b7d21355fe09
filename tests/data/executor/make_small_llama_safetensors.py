# Writes small-llama.safetensors, the test data of tests/executor/model/
# hf_weights_test.cpp, with Hugging Face's own writer (pip install
# safetensors numpy; not a dependency of Stowage). Run once:
#   python3 make_small_llama_safetensors.py
# The model is hf_weights_test's small Llama (llama_whole_model.h's
# small_llama_spec: d_model 16, 2 blocks, 4 heads over 2 kv heads of 4,
# ffn 32, vocab 32). Element i of the tensor listed k-th below holds
# ((i + 3k) % 17 - 8) / 16, exact in F16 and F32; matrices are F16, the
# norms F32, so both widening paths are read.
import numpy as np
from safetensors.numpy import save_file

D, LAYERS, HEADS, KV, HEAD_DIM, FFN, VOCAB = 16, 2, 4, 2, 4, 32, 32

shapes = [("model.embed_tokens.weight", (VOCAB, D))]
for n in range(LAYERS):
    p = f"model.layers.{n}."
    shapes += [
        (p + "input_layernorm.weight", (D,)),
        (p + "self_attn.q_proj.weight", (HEADS * HEAD_DIM, D)),
        (p + "self_attn.k_proj.weight", (KV * HEAD_DIM, D)),
        (p + "self_attn.v_proj.weight", (KV * HEAD_DIM, D)),
        (p + "self_attn.o_proj.weight", (D, HEADS * HEAD_DIM)),
        (p + "post_attention_layernorm.weight", (D,)),
        (p + "mlp.gate_proj.weight", (FFN, D)),
        (p + "mlp.up_proj.weight", (FFN, D)),
        (p + "mlp.down_proj.weight", (D, FFN)),
    ]
shapes += [("model.norm.weight", (D,)), ("lm_head.weight", (VOCAB, D))]

tensors = {}
for k, (name, shape) in enumerate(shapes):
    i = np.arange(int(np.prod(shape)))
    values = (((i + 3 * k) % 17) - 8) / 16.0
    dtype = np.float32 if len(shape) == 1 else np.float16
    tensors[name] = values.astype(dtype).reshape(shape)
save_file(tensors, "small-llama.safetensors", metadata={"format": "pt"})
