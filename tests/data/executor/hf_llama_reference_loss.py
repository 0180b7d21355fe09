# The loss transformers' LlamaForCausalLM gives on small-llama.safetensors,
# computed by an independent float64 numpy transcription of its forward
# (modeling_llama: LlamaRMSNorm, rotate_half / apply_rotary_pos_emb,
# repeat_kv, LlamaMLP, the causal-LM cross-entropy), for the test
# HfWeights.APythonFileGivesTransformersLlamaLoss. Needs numpy and safetensors
# (not dependencies of Stowage). Run once, from this folder:
#   python3 hf_llama_reference_loss.py
import numpy as np
from safetensors.numpy import load_file

t = {k: v.astype(np.float64) for k, v in load_file("small-llama.safetensors").items()}
D, HEADS, KV, HEAD_DIM, LAYERS, THETA, EPS = 16, 4, 2, 4, 2, 10000.0, 1e-5
inputs = np.array([1, 2, 3, 4, 5, 6, 7, 8])
targets = np.array([2, 3, 4, 5, 6, 7, 8, 9])
T = len(inputs)


def rms_norm(x, w):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS))


inv_freq = 1.0 / THETA ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
angles = np.outer(np.arange(T), inv_freq)
emb = np.concatenate([angles, angles], -1)
cos, sin = np.cos(emb), np.sin(emb)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], -1)


def rope(x):
    return x * cos[None] + rotate_half(x) * sin[None]


x = t["model.embed_tokens.weight"][inputs]
mask = np.triu(np.full((T, T), -np.inf), 1)
for n in range(LAYERS):
    p = f"model.layers.{n}."
    h = rms_norm(x, t[p + "input_layernorm.weight"])
    q = (h @ t[p + "self_attn.q_proj.weight"].T).reshape(T, HEADS, HEAD_DIM).transpose(1, 0, 2)
    k = (h @ t[p + "self_attn.k_proj.weight"].T).reshape(T, KV, HEAD_DIM).transpose(1, 0, 2)
    v = (h @ t[p + "self_attn.v_proj.weight"].T).reshape(T, KV, HEAD_DIM).transpose(1, 0, 2)
    q, k = rope(q), rope(k)
    k, v = np.repeat(k, HEADS // KV, 0), np.repeat(v, HEADS // KV, 0)  # repeat_kv
    s = q @ k.transpose(0, 2, 1) / np.sqrt(HEAD_DIM) + mask
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    a = (s @ v).transpose(1, 0, 2).reshape(T, HEADS * HEAD_DIM)
    x = x + a @ t[p + "self_attn.o_proj.weight"].T
    h = rms_norm(x, t[p + "post_attention_layernorm.weight"])
    gate = h @ t[p + "mlp.gate_proj.weight"].T
    up = h @ t[p + "mlp.up_proj.weight"].T
    x = x + ((gate / (1 + np.exp(-gate))) * up) @ t[p + "mlp.down_proj.weight"].T
logits = rms_norm(x, t["model.norm.weight"]) @ t["lm_head.weight"].T
logits -= logits.max(-1, keepdims=True)
log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
print("%.9f" % -log_probs[np.arange(T), targets].mean())
