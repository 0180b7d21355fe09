#!/usr/bin/env python3
"""Records a PyTorch profiler (Kineto) trace of a small DeepSpeed ZeRO-Offload
run, the measured side `stowage compare` reads at lane level (issue 14 item 7;
a peer tool, not in CI).

The model is the bundled tiny-llama (profiles/models/tiny-llama.yaml) as
transformers' LlamaForCausalLM; the run is the bundled `tiny` training
profile (micro-batch 8 of 128 tokens, bf16, AdamW) under ZeRO stage 2 with
the optimizer offloaded to the CPU (DeepSpeedCPUAdam), on DeepSpeed's CPU
accelerator, world size 1. torch.profiler records `--active` steps after one
of warm-up and writes the Chrome trace.

  bench/peers/kineto_record.py -o trace.json [--active 2] [--build build/dev]

It runs itself again inside the peers' virtual environment
(build/dev/peers-venv, torch, deepspeed, transformers; made by
bench/peers/deepspeed_check or on first use here).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def ensure_venv(venv):
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import torch, deepspeed, transformers"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "torch", "deepspeed", "accelerate", "transformers"],
                   check=True)
    return python


def record(args):
    import deepspeed
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=256, hidden_size=192, intermediate_size=512, num_hidden_layers=4,
                         num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=256,
                         rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    micro, seq = 8, 128
    ds_config = {
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": 1,
        "bf16": {"enabled": True},
        "optimizer": {"type": "AdamW",
                      "params": {"lr": 3e-3, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.01}},
        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": False}},
    }
    deepspeed.init_distributed(dist_backend="gloo")
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    data = torch.randint(0, 256, (micro, seq + 1))
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.active, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule) as prof:
        for _ in range(1 + args.active):
            out = engine(input_ids=data[:, :-1], labels=data[:, 1:])
            engine.backward(out.loss)
            engine.step()
            prof.step()
    prof.export_chrome_trace(args.output)
    print(f"wrote {args.output}: {1 + args.active} steps, the last {args.active} profiled; "
          f"torch {torch.__version__}, deepspeed {deepspeed.__version__}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--active", type=int, default=2, help="profiled steps")
    parser.add_argument("--build", default="build/dev")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        return record(args)
    python = ensure_venv(Path(args.build).resolve() / "peers-venv")
    env = dict(os.environ, DS_ACCELERATOR="cpu", MASTER_ADDR="127.0.0.1", MASTER_PORT="29611", RANK="0",
               WORLD_SIZE="1", LOCAL_RANK="0",
               TORCH_EXTENSIONS_DIR=str(python.parent.parent / "torch_extensions"))
    return subprocess.run([str(python), __file__, "--inside", "-o", str(Path(args.output).resolve()),
                           "--active", str(args.active)], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
