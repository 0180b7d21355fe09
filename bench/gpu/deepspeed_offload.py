#!/usr/bin/env python3
"""Runs DeepSpeed ZeRO-Offload on the GPU machine under the DeepSpeed
configuration Stowage exported, and records a PyTorch profiler (Kineto)
trace of it: the measured side that `stowage compare` lays beside Stowage's
prediction for the same plan (issue 14 item 7, issue 15 item 6; a peer
check, never in CI).

  bench/gpu/deepspeed_offload.py --ds-config ds.json --model profiles/models/opt-1.3b.yaml \
      --sequence 2048 -o trace.json [--active 2] [--device-memory-gib 8]

The model is the Stowage model profile built as transformers' causal LM of
its family (OPT: learned positions, LayerNorm, ReLU; Llama: RoPE, RMSNorm,
SwiGLU), in bf16, initialised on the GPU; the batch and the optimizer are
the exported configuration's. Activation checkpointing is on when
--checkpointing says so. --device-memory-gib caps PyTorch's allocator
(torch.cuda.set_per_process_memory_fraction), so that the run offloads
because it must, as Stowage's executor caps its device arena.

It prints one line per training step ("step N: S s") and a summary line
("deepspeed step: median S s over N steps; optimizer: NAME"), and writes the
trace of the --active steps after one of warm-up. DeepSpeedCPUAdam is
JIT-built by DeepSpeed (ninja); when that fails, the script says so and
exits 3 rather than time a different optimizer.
"""

import argparse
import json
import os
import statistics
import sys
import time


def model_from_profile(path):
    import yaml
    with open(path) as f:
        p = yaml.safe_load(f)
    from transformers import LlamaConfig, LlamaForCausalLM, OPTConfig, OPTForCausalLM
    if p.get("position") == "learned":
        config = OPTConfig(vocab_size=p["vocab"], hidden_size=p["d_model"], num_hidden_layers=p["layers"],
                           ffn_dim=p["ffn"], num_attention_heads=p["heads"],
                           max_position_embeddings=p["max_positions"], word_embed_proj_dim=p["d_model"],
                           activation_function="relu", do_layer_norm_before=True,
                           tie_word_embeddings=bool(p.get("tied_embeddings", True)))
        return OPTForCausalLM, config
    config = LlamaConfig(vocab_size=p["vocab"], hidden_size=p["d_model"], intermediate_size=p["ffn"],
                         num_hidden_layers=p["layers"], num_attention_heads=p["heads"],
                         num_key_value_heads=p.get("kv_heads", p["heads"]),
                         max_position_embeddings=p["max_positions"],
                         tie_word_embeddings=bool(p.get("tied_embeddings", False)))
    return LlamaForCausalLM, config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ds-config", required=True, help="the DeepSpeed JSON `stowage export deepspeed` wrote")
    parser.add_argument("--model", required=True, help="a Stowage model profile (YAML)")
    parser.add_argument("--sequence", type=int, required=True, help="tokens per sequence")
    parser.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    parser.add_argument("-o", "--output", required=True, help="the Kineto trace to write")
    parser.add_argument("--active", type=int, default=2, help="profiled steps, after one of warm-up")
    parser.add_argument("--device-memory-gib", type=float, default=0, help="cap PyTorch's allocator (0: no cap)")
    parser.add_argument("--cpu", action="store_true",
                        help="DeepSpeed's CPU accelerator instead of CUDA: a smoke test of this script anywhere")
    args = parser.parse_args()

    if args.cpu:
        os.environ["DS_ACCELERATOR"] = "cpu"
    for key, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29612", "RANK": "0", "WORLD_SIZE": "1",
                       "LOCAL_RANK": "0"}.items():
        os.environ.setdefault(key, value)
    import torch
    import deepspeed

    with open(args.ds_config) as f:
        ds_config = json.load(f)
    micro = ds_config["train_micro_batch_size_per_gpu"]
    accumulation = ds_config.get("gradient_accumulation_steps", 1)

    device = "cpu" if args.cpu else "cuda"
    synchronize = (lambda: None) if args.cpu else torch.cuda.synchronize
    if args.device_memory_gib > 0 and not args.cpu:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, args.device_memory_gib * 2**30 / total))

    cls, config = model_from_profile(args.model)
    torch.manual_seed(1)
    started = time.perf_counter()
    with torch.device(device):
        model = cls(config).to(torch.bfloat16)
    if args.checkpointing:
        model.gradient_checkpointing_enable()
    model.config.use_cache = False
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {cls.__name__}, {params / 1e9:.3f} B parameters, built in {time.perf_counter() - started:.1f} s",
          flush=True)

    deepspeed.init_distributed(dist_backend="gloo" if args.cpu else "nccl")
    started = time.perf_counter()
    try:
        engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                       config=ds_config)
    except Exception as e:  # DeepSpeedCPUAdam's JIT build, mostly
        print(f"deepspeed.initialize FAILED: {type(e).__name__}: {e}", flush=True)
        return 3
    inner = getattr(optimizer, "optimizer", optimizer)
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}: initialised in "
          f"{time.perf_counter() - started:.1f} s; optimizer {type(inner).__name__}", flush=True)

    vocab = config.vocab_size
    data = torch.randint(0, vocab, (micro, args.sequence + 1), device=device)
    steps = 1 + args.active
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.active, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if not args.cpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    times = []
    with torch.profiler.profile(activities=activities, schedule=schedule) as prof:
        for step in range(steps):
            synchronize()
            started = time.perf_counter()
            for _ in range(accumulation):
                out = engine(input_ids=data[:, :-1], labels=data[:, 1:])
                engine.backward(out.loss)
                engine.step()
            synchronize()
            times.append(time.perf_counter() - started)
            print(f"step {step}: {times[-1]:.3f} s, loss {out.loss.item():.4f}", flush=True)
            prof.step()
    prof.export_chrome_trace(args.output)
    peak = 0.0 if args.cpu else torch.cuda.max_memory_allocated() / 2**30
    print(f"deepspeed step: median {statistics.median(times[1:]):.3f} s over {len(times) - 1} steps "
          f"(warm-up {times[0]:.3f} s); optimizer: {type(inner).__name__}; gpu peak {peak:.2f} GiB; "
          f"trace {args.output}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
