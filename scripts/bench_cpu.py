#!/usr/bin/env python3
"""CPU benchmark of pipecc against PyTorch (a benchmark, not a test); run it
through scripts/bench-cpu.sh, which makes the PyTorch venv and documents the
options (docs/testing.md, "Benchmarks against PyTorch").

Subcommands:
  plan                 print the configurations the options select (no torch;
                       what `bench-cpu.sh --dry-run` runs)
  run OUT              the whole benchmark, files and table.md in OUT
  eager | pipelining   one PyTorch run (started by `run` as a subprocess, so
                       that its thread settings precede `import torch`)

Options come from the environment (see bench-cpu.sh). Torch is imported only
by the subcommands that need it.
"""
import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# pipecc schedule name -> (torch.distributed.pipelining class, virtual stages
# per rank, placement of a rank's virtual stages: "loop" r, r+P, ... or "v"
# r, 2P-1-r).
SCHEDULES = {
    "gpipe": ("ScheduleGPipe", 1, "loop"),
    "1f1b": ("Schedule1F1B", 1, "loop"),
    "interleaved-1f1b": ("ScheduleInterleaved1F1B", 2, "loop"),
    "zb-h1": ("ScheduleInterleavedZeroBubble", 1, "loop"),
    "zb-v": ("ScheduleZBVZeroBubble", 2, "v"),
}
MODELS = ("mlp", "gpt")

# One thread per rank, set before any BLAS or OpenMP runtime starts.
THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "OPENBLAS_NUM_THREADS": "1"}


class OptionError(Exception):
    pass


def env_int(name, default, minimum=1):
    text = os.environ.get(name, "").strip() or str(default)
    try:
        value = int(text)
    except ValueError:
        raise OptionError("%s=%r is not an integer" % (name, text))
    if value < minimum:
        raise OptionError("%s=%d must be at least %d" % (name, value, minimum))
    return value


def env_list(name, default):
    return (os.environ.get(name, "").strip() or default).split()


def options():
    """The benchmark's options from the environment, checked."""
    quick = os.environ.get("QUICK", "") not in ("", "0")
    o = {
        "quick": quick,
        "ranks": [],
        "microbatches": env_int("M", 8),
        "steps": env_int("STEPS", 4 if quick else 10),
        "warmup": env_int("WARMUP", 1 if quick else 2, minimum=0),
        "repeats": env_int("REPEATS", 1 if quick else 3),
        "width": env_int("WIDTH", 256 if quick else 1024),
        "layers": env_int("LAYERS", 8),
        "classes": env_int("CLASSES", 64),
        "batch": env_int("BATCH", 64 if quick else 256),
        "gpt_batch": env_int("GPT_BATCH", 8),
        "models": env_list("MODELS", "mlp" if quick else "mlp gpt"),
        "schedules": env_list("SCHEDULES",
                              "1f1b" if quick else "gpipe 1f1b zb-h1 zb-v"),
        "lr": float(os.environ.get("LR", "") or 0.01),
        "timeout": env_int("RUN_TIMEOUT", 900),
        # Also every pipecc configuration with --no-packed-weights (the BLAS
        # packing each weight at every call): what the packed copies gain.
        "blas_rows": os.environ.get("BLAS_ROWS", "") not in ("", "0"),
        # `pipecc profile` again before every repeat round (and pipecc's
        # configurations compiled again with it), so that each prediction
        # is set beside runs made minutes after its profile, not after
        # every earlier round: a shared machine's speed drifts.
        "profile_rounds": os.environ.get("PROFILE_ONCE", "") in ("", "0"),
        # Extra pipecc options for every pipecc configuration, e.g.
        # "--weight-gradient-group 2", to bench a choice that is not the
        # default (the table's heading names them).
        "pipecc_flags": env_list("PIPECC_FLAGS", ""),
    }
    for flag in o["pipecc_flags"]:
        if flag in ("-o", "--stages", "--microbatches", "--schedule",
                    "--chunks", "--lr", "--device"):
            raise OptionError("PIPECC_FLAGS: %s is set by the benchmark "
                              "itself" % flag)
    for text in env_list("P", "1 2" if quick else "1 2 4"):
        if not text.isdigit() or int(text) < 1:
            raise OptionError("P=%r: rank counts are positive integers" % text)
        o["ranks"].append(int(text))
    for model in o["models"]:
        if model not in MODELS:
            raise OptionError("MODELS: unknown model '%s' (known: %s)"
                              % (model, " ".join(MODELS)))
    for schedule in o["schedules"]:
        if schedule not in SCHEDULES:
            raise OptionError("SCHEDULES: unknown schedule '%s' (known: %s)"
                              % (schedule, " ".join(SCHEDULES)))
    if o["steps"] <= o["warmup"]:
        raise OptionError("STEPS=%d must exceed WARMUP=%d (steps after the "
                          "warm-up are timed)" % (o["steps"], o["warmup"]))
    for model in o["models"]:
        batch = o["batch"] if model == "mlp" else o["gpt_batch"]
        name = "BATCH" if model == "mlp" else "GPT_BATCH"
        if batch % o["microbatches"]:
            raise OptionError("%s=%d is not a multiple of M=%d"
                              % (name, batch, o["microbatches"]))
    return o


def configs(o):
    """Every measured configuration: (model, runner, P, M, schedule). The
    runners are eager (P = 1), torch (torch.distributed.pipelining) and
    pipecc; a torch and a pipecc row with the same key are compared."""
    rows = []
    m = o["microbatches"]
    for model in o["models"]:
        for p in o["ranks"]:
            if p == 1:
                for mb in sorted({1, m}):
                    rows.append((model, "eager", 1, mb, "-"))
                    rows.append((model, "pipecc", 1, mb, "1f1b"))
                    if o["blas_rows"]:
                        rows.append((model, "pipecc-blas", 1, mb, "1f1b"))
                continue
            blocks = len(block_sizes(model_spec(o, model)))
            for schedule in o["schedules"]:
                chunks = SCHEDULES[schedule][1]
                if blocks < p * chunks:
                    continue  # More stages than the model has blocks.
                rows.append((model, "torch", p, m, schedule))
                rows.append((model, "pipecc", p, m, schedule))
                if o["blas_rows"]:
                    rows.append((model, "pipecc-blas", p, m, schedule))
    return rows


def config_name(model, runner, p, m, schedule):
    name = "%s-%s-p%d-m%d" % (model, runner, p, m)
    return name if schedule == "-" else name + "-" + schedule


def cmd_plan():
    o = options()
    print("bench-cpu plan: models %s, P %s, M %d, %d steps (%d warm-up), "
          "%d repeats" % (" ".join(o["models"]),
                          " ".join(map(str, o["ranks"])), o["microbatches"],
                          o["steps"], o["warmup"], o["repeats"]))
    print("mlp: %d x Linear %dx%d + ReLU, Linear %dx%d, batch %d; gpt batch %d"
          % (o["layers"], o["width"], o["width"], o["width"], o["classes"],
             o["batch"], o["gpt_batch"]))
    for row in configs(o):
        model, runner, p, m, schedule = row
        if runner == "eager":
            what = "PyTorch eager"
        elif runner in ("pipecc", "pipecc-blas"):
            what = "pipecc --stages %d --microbatches %d --schedule %s " \
                "--chunks %d" % (p, m, schedule,
                                 SCHEDULES[schedule][1] if p > 1 else 1)
            what += "".join(" " + flag for flag in o["pipecc_flags"])
            if runner == "pipecc-blas":
                what += ", run with --no-packed-weights"
        else:
            chunks = SCHEDULES[schedule][1]
            groups = split_blocks(block_sizes(model_spec(o, model)),
                                  p * chunks)
            what = "torch.distributed.pipelining %s, blocks per rank: %s" % (
                SCHEDULES[schedule][0], " ".join(
                    "+".join("%d-%d" % (groups[s][0], groups[s][-1])
                             for s in stage_ids(schedule, r, p))
                    for r in range(p)))
        print("config %s: %s" % (config_name(*row), what))


# ---------------------------------------------------------------- models --

def build_model(torch, spec):
    """The full model (nn.Module mapping the data inputs to logits), its
    blocks in order (for splitting into pipeline stages), the data input
    names and the batch."""
    nn = torch.nn
    torch.manual_seed(0)
    if spec["model"] == "mlp":
        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                w, n = spec["width"], spec["layers"]
                self.layers = nn.ModuleList(
                    [nn.Linear(w, w) for _ in range(n)] +
                    [nn.Linear(w, spec["classes"])])

            def forward(self, x):
                for layer in self.layers[:-1]:
                    x = torch.relu(layer(x))
                return self.layers[-1](x)

        class Block(nn.Module):
            def __init__(self, linear, relu):
                super().__init__()
                self.linear, self.relu = linear, relu

            def forward(self, x):
                y = self.linear(x)
                return torch.relu(y) if self.relu else y

        model = MLP()
        blocks = [Block(layer, i < spec["layers"])
                  for i, layer in enumerate(model.layers)]
        return model, blocks
    return build_gpt(torch, spec)


GPT = {"vocab": 512, "width": 256, "heads": 4, "layers": 4, "sequence": 64}


def build_gpt(torch, spec):
    """nanoGPT's layout, as ../shared/cases/tiny_gpt_untied (which pipecc
    imports): token and position embeddings, pre-LayerNorm blocks with
    causal attention from MatMul/Softmax and a masked_fill mask, exact GELU,
    a separate LM head."""
    nn, F = torch.nn, torch.nn.functional
    c = GPT

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(c["width"], 3 * c["width"])
            self.c_proj = nn.Linear(c["width"], c["width"])
            t = c["sequence"]
            self.register_buffer("causal_mask", torch.tril(
                torch.ones(t, t)).view(1, 1, t, t), persistent=False)

        def forward(self, x):
            b, t, d = x.shape
            h = c["heads"]
            q, k, v = self.c_attn(x).split(d, dim=2)
            q = q.view(b, t, h, d // h).transpose(1, 2)
            k = k.view(b, t, h, d // h).transpose(1, 2)
            v = v.view(b, t, h, d // h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
            att = att.masked_fill(self.causal_mask == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(c["width"])
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(c["width"])
            self.c_fc = nn.Linear(c["width"], 4 * c["width"])
            self.c_proj = nn.Linear(4 * c["width"], c["width"])

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))

    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(c["vocab"], c["width"])
            self.wpe = nn.Embedding(c["sequence"], c["width"])

        def forward(self, idx):
            pos = torch.arange(idx.shape[1], device=idx.device)
            return self.wte(idx) + self.wpe(pos)

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_f = nn.LayerNorm(c["width"])
            self.lm_head = nn.Linear(c["width"], c["vocab"], bias=False)

        def forward(self, x):
            return self.lm_head(self.ln_f(x))

    class GPTModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = Embed()
            self.h = nn.ModuleList([Block() for _ in range(c["layers"])])
            self.head = Head()

        def forward(self, idx):
            x = self.embed(idx)
            for block in self.h:
                x = block(x)
            return self.head(x)

    model = GPTModel()
    return model, [model.embed] + list(model.h) + [model.head]


def loss_of(torch, logits, labels):
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def model_spec(o, model):
    spec = {"model": model, "width": o["width"], "layers": o["layers"],
            "classes": o["classes"]}
    spec["batch"] = o["batch"] if model == "mlp" else o["gpt_batch"]
    return spec


def load_data(np, data_dir, model):
    names = ("x", "labels") if model == "mlp" else ("idx", "labels")
    return [np.load(os.path.join(data_dir, n + ".npy")) for n in names]


def write_model(torch, np, spec, folder):
    """Writes folder/model.onnx (the pipecc input), folder/state.pt (the
    same weights for the PyTorch runners) and folder/data/*.npy (one batch,
    seed 0, used by every runner at every step)."""
    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    model, _ = build_model(torch, spec)
    torch.save(model.state_dict(), os.path.join(folder, "state.pt"))
    rng = np.random.default_rng(0)
    b = spec["batch"]
    if spec["model"] == "mlp":
        data = rng.standard_normal((b, spec["width"])).astype(np.float32)
        labels = rng.integers(0, spec["classes"], b).astype(np.int64)
        np.save(os.path.join(folder, "data", "x.npy"), data)
        example, inputs, outputs = (torch.from_numpy(data),), ["x"], ["logits"]
        exported = model
    else:
        data = rng.integers(0, GPT["vocab"], (b, GPT["sequence"]))
        labels = rng.integers(0, GPT["vocab"], (b, GPT["sequence"]))
        np.save(os.path.join(folder, "data", "idx.npy"), data)

        class WithLoss(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, idx, labels):
                return loss_of(torch, self.model(idx), labels)

        exported = WithLoss()
        example = (torch.from_numpy(data), torch.from_numpy(labels))
        inputs, outputs = ["idx", "labels"], ["loss"]
    np.save(os.path.join(folder, "data", "labels.npy"), labels)
    # The TorchScript exporter (as ../shared/cases), with a symbolic batch
    # so that no Reshape hard-codes the traced batch (pipecc compiles the
    # graph for the micro-batch), then the batch pinned in the inputs
    # (pipecc wants static input shapes).
    import io
    import warnings
    import onnx
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(exported, example, buffer, dynamo=False,
                          opset_version=17, input_names=inputs,
                          output_names=outputs,
                          dynamic_axes={n: {0: "batch"} for n in inputs},
                          export_params=True, do_constant_folding=False,
                          keep_initializers_as_inputs=False,
                          training=torch.onnx.TrainingMode.EVAL)
    exported_model = onnx.load_from_string(buffer.getvalue())
    for value in exported_model.graph.input:
        dims = value.type.tensor_type.shape.dim
        dims[0].Clear()
        dims[0].dim_value = b
    onnx.save(exported_model, os.path.join(folder, "model.onnx"))
    return model


def gemm_shapes(torch, model, example, rows_divisor, first_reads_input):
    """(rows, in, out, needs_input_grad) of every Linear in forward order,
    rows per micro-batch (the batch's rows divided by rows_divisor); the
    first Linear needs no input gradient when it reads a graph input."""
    shapes = []

    def hook(module, args, _):
        x = args[0]
        rows = x.numel() // x.shape[-1] // rows_divisor
        shapes.append((rows, module.in_features, module.out_features,
                       bool(shapes) or not first_reads_input))

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        model(*example)
    for h in handles:
        h.remove()
    return shapes


def step_products(shapes):
    """The step's matmuls per Linear (rows, in, out, needs_input_grad):
    (key, role) with key = (m, k, n) of the product and role "forward"
    (x W^T), "input" (dY W) or "weight" (dY^T X, added into the
    gradient's accumulator)."""
    products = []
    for rows, k, n, input_grad in shapes:
        products.append(((rows, k, n), "forward"))
        products.append(((n, rows, k), "weight"))
        if input_grad:
            products.append(((rows, n, k), "input"))
    return products


def batched_products(spec, rows_divisor):
    """The step's batched matmuls (the GPT's attention, per layer: Q K^T and
    P V forward; dP = dY V^T, dV = P^T dY, dQ = dS K and dK = dS^T Q
    backward), which pipecc's sgemm counters count beside the Linear
    layers': (key, role) with key = (batch, m, k, n) and role "batched"."""
    if spec["model"] != "gpt":
        return []
    c = GPT
    batch = spec["batch"] // rows_divisor * c["heads"]
    t, d = c["sequence"], c["width"] // c["heads"]
    per_layer = [(t, d, t), (t, t, d), (t, d, t), (t, t, d), (t, t, d),
                 (t, t, d)]
    return [((batch,) + mkn, "batched") for mkn in per_layer] * c["layers"]


# The rotated operand of a cold timing passes this many bytes, so that each
# call finds it in memory, not in the caches (32 MiB of L3 here), as a step
# does: a weight is read once per layer and micro-batch, an accumulator
# written once.
COLD_BYTES = 64 << 20


def time_product(torch, key, role, cold, seconds):
    """The best time of one product by single-thread torch: hot operands
    (the same ones every call), or cold (the step's large operand rotated
    through COLD_BYTES of copies: the weight for forward and input, the
    accumulator for weight, which adds into it with beta = 1 as the step
    does: `addmm_`)."""
    if role == "batched":
        batch, m, k, n = key
        copies = max(2, -(-COLD_BYTES // (4 * batch * (m * k + k * n)))) \
            if cold else 1
        pairs = [(torch.randn(batch, m, k), torch.randn(batch, k, n))
                 for _ in range(copies)]
        c = torch.empty(batch, m, n)
        state = [0]

        def run():
            state[0] = (state[0] + 1) % len(pairs)
            torch.bmm(*pairs[state[0]], out=c)
        return best_time(run, seconds)
    m, k, n = key
    if not cold:
        a, b = torch.randn(m, k), torch.randn(k, n)
        run = lambda: torch.mm(a, b)
    elif role == "weight":
        a, b = torch.randn(k, m).t(), torch.randn(k, n)
        cs = [torch.zeros(m, n) for _ in range(max(2, -(-COLD_BYTES //
                                                       (4 * m * n))))]
        state = [0]

        def run():
            state[0] = (state[0] + 1) % len(cs)
            cs[state[0]].addmm_(a, b)
    else:
        a, c = torch.randn(m, k), torch.empty(m, n)
        # forward: x W^T with W (out x in) = (n x k); input: dY W, W (k x n).
        shape = (n, k) if role == "forward" else (k, n)
        ws = [torch.randn(*shape) for _ in range(max(2, -(-COLD_BYTES //
                                                     (4 * k * n))))]
        state = [0]

        def run():
            state[0] = (state[0] + 1) % len(ws)
            w = ws[state[0]]
            torch.mm(a, w.t() if role == "forward" else w, out=c)
    return best_time(run, seconds)


def best_time(run, seconds):
    """The best time of `run` over `seconds` (at least 3 calls), after one
    call to warm up."""
    run()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def sgemm_peak(torch, shapes, best, seconds=0.3, cold=False, batched=()):
    """The single-thread sgemm rate (GFLOP/s) of the step's matmuls if
    each ran at its best measured time: forward x W^T, input gradient
    dY W, weight gradient dY^T X for every Linear (the first has no input
    gradient), each at the better of torch (hot operands, or with `cold`
    the step's large operand cold: time_product) and pipecc profile's rate
    at that shape. `best` maps (key, role, cold) to the best time so far:
    each call times every product again and keeps the better time, so that
    measuring before and after the runs rides out a busy moment of a
    shared machine."""
    total_flops, total_time = 0.0, 0.0
    for key, role in step_products(shapes) + list(batched):
        total_flops += 2.0 * math.prod(key)
        total_time += product_best_seconds(torch, key, role, best, seconds,
                                           cold)
    return total_flops / total_time / 1e9


def best_entry(key, role, cold=False):
    """A product's key in sgemm_peak's `best`: hot timings of one shape
    are the same product whatever its role (torch.mm on hot operands),
    batched and cold ones are not."""
    return (key, role if cold or role == "batched" else "", cold)


def product_best_seconds(torch, key, role, best, seconds=0.3, cold=False):
    """The best time of one product of the step (sgemm_peak's rule): the
    best of torch (timed unless `best` holds it, or without `torch`),
    pipecc profile's rate and pipecc's own entry points at that shape."""
    entry = best_entry(key, role, cold)
    if entry not in best or (not best[entry][1] and torch is not None):
        measured = time_product(torch, key, role, cold, seconds)
        best[entry] = (min(measured, best.get(entry, (1e9,))[0]), True)
    flops = 2.0 * math.prod(key)
    seconds_each = best[entry][0]
    rate = profile_shape_rate(key, role, cold) if role != "batched" else None
    if rate:
        seconds_each = min(seconds_each, flops / rate)
    # pipecc's own entry points at this exact shape (product_rates).
    own = PIPECC_RATES.get((key, role))
    if own and own[1 if cold else 0] > 0:
        seconds_each = min(seconds_each, flops / (own[1 if cold else 0]
                                                  * 1e9))
    return seconds_each


# `out/launch --gemms` lines: (rank, [batch], M, N, K, ops, beta, path,
# calls, ms).
GEMM_LINE = re.compile(
    r"^gemm rank (\d+): (?:(\d+) x )?(\d+)x(\d+)x(\d+) ([nt][nt]) beta "
    r"([01]) (\S+), (\d+) calls, ([0-9.]+) ms", re.M)


def gemm_products(text):
    """{rank: [(key, role, path, calls, seconds)]} from --gemms lines,
    keyed as step_products and batched_products key the step's products:
    x W^T (nt) is forward, dY W (nn) input, dY^T X (tn) weight; a batch
    is batched."""
    ranks = {}
    for (rank, batch, m, n, k, ops, _, path, calls,
         ms) in GEMM_LINE.findall(text):
        m, n, k = int(m), int(n), int(k)
        if batch:
            key, role = (int(batch), m, k, n), "batched"
        else:
            key = (m, k, n)
            role = {"nt": "forward", "nn": "input", "tn": "weight"}.get(ops)
        if role:
            ranks.setdefault(int(rank), []).append(
                (key, role, path, int(calls), float(ms) / 1e3))
    return ranks


PROFILE_GEMM = {}
# Why `pipecc profile` gave no profile (for the report), or None.
PROFILE_ERROR = [None]

# pipecc-profile-host beside the compiler's link files (build/lib), and the
# rates (GFLOP/s, hot and cold) it measured per (key, role): the best of
# every measurement.
PIPECC_HOST = [None]
PIPECC_RATES = {}


def product_rates(products, hot_only=False, kept=PIPECC_RATES):
    """Times each (key, role) product of a step through pipecc's own
    entry points (`pipecc-profile-host --products`: the packed-weight
    sgemm, the accumulating weight gradient, the batched products), hot
    and cold (with `hot_only` hot alone, `--hot`), and keeps the best
    rates in `kept` (PIPECC_RATES: the peak's). Without it the peak would
    be torch's and the profile grid's alone, and a shape off the grid (the
    GPT's 768-wide q/k/v projection) or a batched product would count at
    torch's rate even where pipecc's kernel is faster. Returns this
    measurement's rates {(key, role): (hot, cold)} (cold 0 with
    `hot_only`), or None without pipecc-profile-host."""
    host = PIPECC_HOST[0]
    if not host:
        return None
    lines = []
    for key, role in dict.fromkeys(products):
        if role == "batched":
            batch, m, k, n = key
        else:
            (m, k, n), batch = key, 1
        lines.append("%s %d %d %d %d" % (role, m, k, n, batch))
    proc = subprocess.run([host, "--products"] + (["--hot"] if hot_only
                                                  else []),
                          input="\n".join(lines) + "\n",
                          capture_output=True, text=True)
    if proc.returncode:
        print("bench-cpu: pipecc-profile-host --products failed: %s" %
              proc.stderr.strip()[-200:], file=sys.stderr)
        return None
    measured = {}
    for line in proc.stdout.splitlines():
        role, m, k, n, batch, hot, cold = line.split()
        m, k, n, batch = int(m), int(k), int(n), int(batch)
        key = (batch, m, k, n) if role == "batched" else (m, k, n)
        hot, cold = float(hot), (0.0 if cold == "-" else float(cold))
        measured[(key, role)] = (hot, cold)
        old = kept.get((key, role), (0.0, 0.0))
        kept[(key, role)] = (max(old[0], hot), max(old[1], cold))
    return measured


def entry_point_rate(products, rates):
    """The hot GFLOP/s of a step's products (key, role), each at its rate
    in `rates` ({(key, role): (hot, cold)}, pipecc's entry points), or
    None where one has no rate."""
    flops = seconds = 0.0
    for key, role in products:
        rate = rates.get((key, role), (0.0,))[0]
        if rate <= 0:
            return None
        flops += 2.0 * math.prod(key)
        seconds += 2.0 * math.prod(key) / (rate * 1e9)
    return flops / seconds


# machine_now's best hot rate per (key, role). Kept apart from the peak's
# PIPECC_RATES: the peak stays the dedicated measurements before and after
# the runs, as in earlier benchmarks, and does not grow with the number of
# runs (the best of more timings of an 8 us product is a luckier one).
AROUND_RATES = {}


def machine_now(products, log=None):
    """How fast the machine multiplies right now: the step's products
    through pipecc's entry points, hot (entry_point_rate of a fresh
    `--products --hot`), GFLOP/s; None without pipecc-profile-host. Each
    product's rate is appended to `log` (a path) when given."""
    measured = product_rates(products, hot_only=True, kept=AROUND_RATES)
    if measured and log:
        with open(log, "a") as f:
            f.write("%.0f %s\n" % (time.time(), " ".join(
                "%s:%s:%.1f" % (role, "x".join(map(str, key)), rate[0])
                for (key, role), rate in sorted(measured.items()))))
    return entry_point_rate(products, measured) if measured else None


def best_rates(*tables):
    """Per (key, role), the best of each rate over `tables`."""
    best = {}
    for table in tables:
        for product, rates in table.items():
            old = best.get(product, (0.0, 0.0))
            best[product] = tuple(max(a, b) for a, b in zip(old, rates))
    return best


def profile_shape_rate(key, role, cold=False):
    """pipecc profile's best rate (FLOP/s, over its transpositions and
    beta, and for a product by a weight (forward, input) also over its
    packed-weight tables) for the product key = (m, k, n), when the shape
    is a point of its grid; None otherwise. The profile's operands are
    cold; with `cold` a weight gradient takes only its beta = 1 tables (a
    beta = 0 product never reads its C, the step's accumulator does)."""
    gemm = PROFILE_GEMM.get("gemm")
    if not gemm:
        return None
    m, k, n = key
    axes = gemm["m"], gemm["n"], gemm["k"]
    if m not in axes[0] or n not in axes[1] or k not in axes[2]:
        return None
    point = ((axes[0].index(m) * len(axes[1]) + axes[1].index(n)) *
             len(axes[2]) + axes[2].index(k))
    tables = list(gemm["tables"])
    if role in ("forward", "input"):
        tables += gemm.get("weight_tables", [])
    if role == "weight" and cold:
        # The step adds a weight gradient into its accumulator: beta = 1.
        tables = [t for t in tables if t.get("beta") == 1]
    rates = [t["flops_per_s"][point] for t in tables]
    return max(rates) if rates else None


def measure_peaks(torch, o, full, example, model, best, profile_rate):
    """sgemm_peak per micro-batch count (1 and M), hot and cold
    ({m: (hot, cold)}), a fresh timing of every shape, the better of it and
    pipecc profile's rate at that shape."""
    for key in best:
        best[key] = (best[key][0], False)
    seconds = 0.1 if o["quick"] else 0.3
    peaks = {}
    spec = model_spec(o, model)
    for m in sorted({1, o["microbatches"]}):
        shapes = gemm_shapes(torch, full, example, m, model == "mlp")
        batched = batched_products(spec, m)
        product_rates(step_products(shapes) + batched)
        peaks[m] = (sgemm_peak(torch, shapes, best, seconds,
                               batched=batched),
                    sgemm_peak(torch, shapes, best, seconds, cold=True,
                               batched=batched))
    return peaks


# -------------------------------------------------------- torch runners --

def torch_setup():
    import numpy as np
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    return torch, np


def cmd_eager(args):
    """eager FOLDER M STEPS LR OUT.json: plain PyTorch, M micro-batches by
    gradient accumulation, SGD."""
    folder, m, steps, lr, out = args[0], int(args[1]), int(args[2]), \
        float(args[3]), args[4]
    spec = json.load(open(os.path.join(folder, "spec.json")))
    torch, np = torch_setup()
    model, _ = build_model(torch, spec)
    model.load_state_dict(torch.load(os.path.join(folder, "state.pt")))
    data, labels = [torch.from_numpy(a) for a in
                    load_data(np, os.path.join(folder, "data"),
                              spec["model"])]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    times, losses = [], []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        total = 0.0
        for x, y in zip(data.chunk(m), labels.chunk(m)):
            loss = loss_of(torch, model(x), y) / m
            loss.backward()
            total += loss.item()
        optimizer.step()
        times.append(time.perf_counter() - start)
        losses.append(total)
    json.dump({"times": times, "losses": losses}, open(out, "w"))


def cmd_pipelining(args):
    """pipelining FOLDER SCHEDULE M STEPS LR OUT.json: one rank of
    torch.distributed.pipelining (RANK, WORLD_SIZE, MASTER_* from the
    environment), gloo."""
    folder, schedule, m, steps, lr, out = args[0], args[1], int(args[2]), \
        int(args[3]), float(args[4]), args[5]
    spec = json.load(open(os.path.join(folder, "spec.json")))
    torch, np = torch_setup()
    import torch.distributed as dist
    from torch.distributed import pipelining
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=size)
    cls, chunks, _ = SCHEDULES[schedule]
    model, blocks = build_model(torch, spec)
    model.load_state_dict(torch.load(os.path.join(folder, "state.pt")))
    n_stages = size * chunks
    mine = stage_ids(schedule, rank, size)
    groups = split_blocks(block_sizes(spec), n_stages)
    device = torch.device("cpu")
    stages = [pipelining.PipelineStage(
        torch.nn.Sequential(*[blocks[i] for i in groups[s]]), s, n_stages,
        device) for s in mine]

    def loss_fn(logits, labels):
        return loss_of(torch, logits, labels)

    if chunks == 1 and cls in ("ScheduleGPipe", "Schedule1F1B"):
        sched = getattr(pipelining, cls)(stages[0], m, loss_fn=loss_fn)
    else:
        sched = getattr(pipelining, cls)(stages, m, loss_fn=loss_fn)
    params = [p for s in stages for p in s.submod.parameters()]
    optimizer = torch.optim.SGD(params, lr=lr)
    data, labels = [torch.from_numpy(a) for a in
                    load_data(np, os.path.join(folder, "data"),
                              spec["model"])]
    first = 0 in mine
    last = n_stages - 1 in mine
    times, losses = [], []
    dist.barrier()
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        step_losses = []
        args_ = (data,) if first else ()
        kwargs = {"target": labels, "losses": step_losses} if last else {}
        sched.step(*args_, **kwargs)
        optimizer.step()
        times.append(time.perf_counter() - start)
        if last:
            losses.append(float(sum(l.item() for l in step_losses) / m))
    dist.barrier()
    json.dump({"times": times, "losses": losses, "rank": rank},
              open(out, "w"))
    dist.destroy_process_group()


def block_sizes(spec):
    """Parameter counts of the model's blocks (build_model's), by formula,
    so that the plan needs no torch."""
    if spec["model"] == "mlp":
        w, c = spec["width"], spec["classes"]
        return [w * w + w] * spec["layers"] + [w * c + c]
    d, v, t = GPT["width"], GPT["vocab"], GPT["sequence"]
    block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + \
        (d * 4 * d + 4 * d) + (4 * d * d + d)
    return [v * d + t * d] + [block] * GPT["layers"] + [2 * d + d * v]


def split_blocks(sizes, n):
    """Contiguous groups of block indices, one per stage, balanced by the
    blocks' parameter counts: the k-th cut goes where the running total is
    closest to k/n of the whole, leaving a block for every stage; None when
    there are fewer blocks than stages."""
    if len(sizes) < n:
        return None
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    cuts = [0]
    for k in range(1, n):
        first, last = cuts[-1] + 1, len(sizes) - (n - k)
        cuts.append(min(range(first, last + 1), key=lambda j: abs(
            prefix[j] - prefix[-1] * k / n)))
    cuts.append(len(sizes))
    return [list(range(a, b)) for a, b in zip(cuts, cuts[1:])]


def stage_ids(schedule, rank, ranks):
    """The virtual stages of `rank`, as pipecc places them."""
    _, chunks, placement = SCHEDULES[schedule]
    if placement == "v":
        return [rank, 2 * ranks - 1 - rank]
    return [rank + i * ranks for i in range(chunks)]


# ------------------------------------------------------------ the driver --

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_env():
    env = dict(os.environ)
    env.update(THREAD_ENV)
    return env


def run_checked(cmd, log, timeout, env=None):
    with open(log, "w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT,
                              env=env or run_env(), timeout=timeout)
    return proc.returncode


def torch_run(o, folder, runner, p, m, schedule, out_prefix):
    """One PyTorch run; (step times of rank 0, losses of the last stage) or
    an error text."""
    me = os.path.abspath(__file__)
    if runner == "eager":
        out = out_prefix + ".json"
        rc = run_checked([sys.executable, me, "eager", folder, str(m),
                          str(o["steps"]), str(o["lr"]), out],
                         out_prefix + ".log", o["timeout"])
        if rc:
            return "exit %d (%s.log)" % (rc, out_prefix)
        result = json.load(open(out))
        return result["times"], result["losses"]
    port = free_port()
    procs = []
    for rank in range(p):
        env = run_env()
        env.update({"RANK": str(rank), "WORLD_SIZE": str(p),
                    "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        log = open("%s.rank%d.log" % (out_prefix, rank), "w")
        procs.append(subprocess.Popen(
            [sys.executable, me, "pipelining", folder, schedule, str(m),
             str(o["steps"]), str(o["lr"]), "%s.rank%d.json" %
             (out_prefix, rank)], stdout=log, stderr=subprocess.STDOUT,
            env=env))
    deadline = time.time() + o["timeout"]
    failed = None
    for rank, proc in enumerate(procs):
        try:
            rc = proc.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            rc = "timeout"
        if rc != 0 and failed is None:
            failed = "rank %d: %s (%s.rank%d.log)" % (rank, rc, out_prefix,
                                                       rank)
            for other in procs:
                if other.poll() is None:
                    other.kill()
    if failed:
        return failed
    results = [json.load(open("%s.rank%d.json" % (out_prefix, r)))
               for r in range(p)]
    losses = next(r["losses"] for r in results if r["losses"])
    return results[0]["times"], losses


def launch_features(launch):
    text = subprocess.run([launch, "--help"], capture_output=True,
                          text=True).stdout + ""
    return {flag: flag in text for flag in ("--threads", "--timers",
                                            "--memory", "--gemms")}


def compile_entry(o, pipecc, folder, row, entry, profile):
    """Compiles a pipecc row into entry["binary"] with `profile`; sets its
    prediction and buffer plan, or its error."""
    model, _, p, m, schedule = row
    error = pipecc_compile(o, pipecc, folder, model, p, m, schedule,
                           entry["binary"], profile)
    if error:
        entry["error"] = error
        return
    manifest = json.load(open(os.path.join(entry["binary"],
                                           "pipeline.json")))
    entry["predicted"] = manifest.get("prediction", {}).get(
        "predicted_step_s")
    entry["arena"] = [r.get("arena_bytes") for r in manifest.get(
        "memory_plan", {}).get("ranks", [])]
    # B and W as two calls (`--split-backward auto` splits 1F1B on several
    # ranks; PyTorch's Schedule1F1B runs them as one).
    entry["split"] = manifest.get("split_backward")


def pipecc_compile(o, pipecc, folder, model, p, m, schedule, out, device):
    chunks = SCHEDULES[schedule][1] if p > 1 else 1
    cmd = [pipecc, os.path.join(folder, "model.onnx"), "--stages", str(p),
           "--microbatches", str(m), "--schedule", schedule, "--chunks",
           str(chunks), "--lr", str(o["lr"]), "-o", out]
    if model == "mlp":
        cmd += ["--loss", "cross-entropy", "--label-input", "labels"]
    if device:
        cmd += ["--device", device]
    cmd += o["pipecc_flags"]
    if os.path.exists(out):
        shutil.rmtree(out)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        return (proc.stderr.strip().splitlines() or ["exit %d" %
                                                     proc.returncode])[-1]
    return None


STEP_LINE = re.compile(r"^step (\d+) loss (\S+) samples/s (\S+)", re.M)
MEMORY_LINE = re.compile(
    r"^memory rank (\d+): arena (\d+) bytes.*peak (\d+) bytes"
    r"(?:.*stage workspace (\d+) bytes)?(?:.*packed weights (\d+) bytes)?",
    re.M)
GFLOPS = re.compile(r"^timers rank \d+ median .*sgemm_gflops ([0-9.]+)", re.M)
# A rank sharing its CPU also prints its products' CPU time.
CPU_GFLOPS = re.compile(
    r"^timers rank \d+ median .*sgemm_cpu_gflops ([0-9.]+)", re.M)


def pipecc_run(o, out, batch, folder, features, log, blas_only=False):
    cmd = [os.path.join(out, "launch"), "--transport", "socket", "--data",
           os.path.join(folder, "data"), "--steps", str(o["steps"]),
           "--lr", str(o["lr"])]
    if blas_only:
        cmd.append("--no-packed-weights")
    for flag in ("--timers", "--memory", "--gemms"):
        if features.get(flag):
            cmd.append(flag)
    if features["--threads"]:
        cmd += ["--threads", "1"]
    rc = run_checked(cmd, log, o["timeout"])
    text = open(log).read()
    if rc:
        return "exit %d (%s)" % (rc, log)
    steps = STEP_LINE.findall(text)
    times = [batch / float(rate) for _, _, rate in steps]
    losses = [float(loss) for _, loss, _ in steps]
    memory = {int(r): (int(a), int(pk), int(ws or 0), int(pw or 0))
              for r, a, pk, ws, pw in MEMORY_LINE.findall(text)}
    timers = [line for line in text.splitlines()
              if line.strip() and not STEP_LINE.match(line)
              and not MEMORY_LINE.match(line)
              and not GEMM_LINE.match(line)]
    return times, losses, memory, timers, gemm_products(text)


def pipecc_profile(pipecc, out, name="host.json"):
    """`pipecc profile -o out/host.json` where the compiler has it: the
    profile's path and its best matmul rate (GFLOP/s, the largest number
    under a key naming GFLOP/s or FLOP/s), else (None, None)."""
    probe = subprocess.run([pipecc, "profile", "--help"],
                           capture_output=True, text=True)
    if probe.returncode or "profile" not in probe.stdout + probe.stderr:
        return None, None
    path = os.path.join(out, name)
    cmd = [pipecc, "profile", "-o", path]
    # pipecc replaces no file it may not have written: an earlier run's
    # profile in this folder is replaced, anything else is left alone.
    try:
        if json.load(open(path)).get("format") == "pipecc-device-profile":
            cmd.append("--force")
    except (OSError, ValueError, AttributeError):
        pass
    proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env())
    if proc.returncode or not os.path.exists(path):
        PROFILE_ERROR[0] = (proc.stderr.strip().splitlines() or
                            ["exit %d" % proc.returncode])[-1]
        return None, None
    rates = []

    def walk(node, key=""):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k.lower())
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, (int, float)) and "flop" in key:
            rates.append(node if "gflop" in key else node / 1e9)

    try:
        profile = json.load(open(path))
        walk(profile)
        PROFILE_GEMM.update(profile if isinstance(profile, dict) else {})
    except ValueError:
        pass
    return path, (max(rates) if rates else None)


def run_medians(runs, warmup):
    """Each run's median step time after the warm-up."""
    return [statistics.median(times[warmup:] or times) for times in runs]


def median_spread(runs, warmup):
    """Median over runs of each run's median step time after the warm-up,
    and the min and max of those per-run medians."""
    per_run = run_medians(runs, warmup)
    return statistics.median(per_run), min(per_run), max(per_run)


def fmt_ms(seconds):
    return "%.1f" % (seconds * 1e3) if seconds is not None else "n/a"


def cmd_run(out):
    o = options()
    os.environ.update(THREAD_ENV)
    # A kernel choice forced from outside (this workplace's shells set
    # OPENBLAS_CORETYPE=Haswell) is not what a user's OpenBLAS picks: every
    # runner gets the library's own choice.
    forced_core = os.environ.pop("OPENBLAS_CORETYPE", None)
    torch, np = torch_setup()
    pipecc = os.environ.get("PIPECC") or os.path.join(ROOT, "build", "bin",
                                                      "pipecc")
    os.makedirs(out, exist_ok=True)
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    cores = os.cpu_count() or 1
    say("# pipecc vs PyTorch on this CPU (scripts/bench-cpu.sh)")
    say()
    say("torch %s, %d cores, load average at start %s; pipecc %s; files in "
        "%s" % (torch.__version__, cores,
                open("/proc/loadavg").read().split()[:3], pipecc, out))
    say("%d steps per run (%d warm-up), %d repeats, M=%d, SGD lr %g, one "
        "thread per rank" % (o["steps"], o["warmup"], o["repeats"],
                             o["microbatches"], o["lr"]))
    if forced_core:
        say("OPENBLAS_CORETYPE=%s was set in the environment: removed for "
            "every runner, so that OpenBLAS picks its kernels itself" %
            forced_core)
    if o["pipecc_flags"]:
        say("pipecc compiled with PIPECC_FLAGS: %s" %
            " ".join(o["pipecc_flags"]))
    if not os.access(pipecc, os.X_OK):
        say("pipecc not built (%s): pipecc rows are n/a" % pipecc)
        pipecc = None
    profile, profile_rate = (pipecc_profile(pipecc, out) if pipecc
                             else (None, None))
    host = pipecc and os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(pipecc))), "lib", "pipecc-profile-host")
    PIPECC_HOST[0] = host if host and os.access(host, os.X_OK) else None
    say("pipecc-profile-host --products (pipecc's rate per step product, "
        "in the peak): %s" % (PIPECC_HOST[0] or "n/a"))
    say("pipecc profile: %s" % ("%s (best matmul %s GFLOP/s)" % (
        profile, "%.1f" % profile_rate if profile_rate else "n/a")
        if profile else "n/a" + (" (%s)" % PROFILE_ERROR[0]
                                 if PROFILE_ERROR[0] else "")))

    results = {}
    extra = {}
    # (model, round, best matmul GFLOP/s) of each profile after the first.
    profile_rounds = []
    for model in o["models"]:
        spec = model_spec(o, model)
        folder = os.path.join(out, model)
        os.makedirs(folder, exist_ok=True)
        json.dump(spec, open(os.path.join(folder, "spec.json"), "w"))
        full = write_model(torch, np, spec, folder)
        inputs = load_data(np, os.path.join(folder, "data"), model)
        example = (torch.from_numpy(inputs[0]),)
        shapes = gemm_shapes(torch, full, example, 1, model == "mlp")
        flops = sum(2.0 * r * k * n * (3 if g else 2)
                    for r, k, n, g in shapes)
        flops_source = "model_flops.py's rule over the Linear layers"
        counted = subprocess.run(
            [sys.executable, os.path.join(ROOT, "scripts", "model_flops.py"),
             os.path.join(folder, "model.onnx")], capture_output=True,
            text=True)
        try:
            counted = json.loads(counted.stdout)
            # The exporter hides 3-D Linear weights behind a Transpose, which
            # model_flops.py does not follow: use it when it sees them all.
            if counted["matmuls"] == len(shapes):
                flops = counted["flops_per_sample"] * spec["batch"]
                flops_source = "scripts/model_flops.py"
        except (ValueError, KeyError):
            pass
        def profile_round(i):
            """This round's `pipecc profile` (the path, else None), kept
            in profile_rounds."""
            path, rate = pipecc_profile(pipecc, out,
                                        "host.%s.%d.json" % (model, i))
            if path:
                profile_rounds.append((model, i, rate))
            return path

        if model != o["models"][0] and o["profile_rounds"] and profile:
            # This model's first round gets a profile of its own too.
            profile = profile_round(0) or profile
        best = {}
        peaks = measure_peaks(torch, o, full, example, model, best,
                              profile_rate)
        # The step's products per micro-batch count, timed again around
        # each pipecc run (machine_now).
        products_at = {
            m: step_products(gemm_shapes(torch, full, example, m,
                                         model == "mlp")) +
            batched_products(spec, m)
            for m in sorted({1, o["microbatches"]})}
        extra[model] = {"flops": flops, "flops_source": flops_source,
                        "peaks": peaks, "profiled": bool(profile_rate)}
        features = None
        # Compile every pipecc configuration first, then run the repeats
        # round-robin over the configurations, so that a change in the
        # machine's load falls on every runner alike.
        rows = [row for row in configs(o) if row[0] == model]
        for row in rows:
            _, runner, p, m, schedule = row
            entry = {"runs": [], "losses": None, "error": None,
                     "prefix": os.path.join(out, "runs", config_name(*row))}
            results[row] = entry
            if runner == "pipecc-blas":
                # The pipecc row's executables, run with --no-packed-weights.
                twin = results.get((model, "pipecc", p, m, schedule), {})
                entry["error"] = twin.get("error") or (
                    None if "binary" in twin else "no pipecc row")
                for key in ("binary", "predicted", "arena", "split"):
                    if key in twin:
                        entry[key] = twin[key]
                continue
            if runner != "pipecc":
                continue
            if not pipecc:
                entry["error"] = "not built"
                continue
            entry["binary"] = os.path.join(out, "build", config_name(*row))
            compile_entry(o, pipecc, folder, row, entry, profile)
            if not entry["error"]:
                features = features or launch_features(
                    os.path.join(entry["binary"], "launch"))
        os.makedirs(os.path.join(out, "runs"), exist_ok=True)
        around_log = os.path.join(out, "runs", "around.txt")
        for i in range(o["repeats"]):
            if i and o["profile_rounds"] and profile:
                # This round's profile and predictions (the executables
                # compiled again with it: the cut may follow the rates).
                fresh = profile_round(i)
                if fresh:
                    profile = fresh
                    for row in rows:
                        if row[1] == "pipecc" and not results[row]["error"]:
                            compile_entry(o, pipecc, folder, row,
                                          results[row], profile)
            for row in rows:
                _, runner, p, m, schedule = row
                entry = results[row]
                if entry["error"]:
                    continue
                print("run %d/%d: %s" % (i + 1, o["repeats"],
                                         config_name(*row)),
                      file=sys.stderr, flush=True)
                prefix = "%s.%d" % (entry["prefix"], i)
                # The machine just before and after a pipecc run: a slow
                # phase of a shared host shows in these as in the run.
                around = ([machine_now(products_at[m], around_log)]
                          if runner == "pipecc" else [])
                try:
                    if runner in ("pipecc", "pipecc-blas"):
                        result = pipecc_run(o, entry["binary"],
                                            spec["batch"], folder, features,
                                            prefix + ".log",
                                            runner == "pipecc-blas")
                    else:
                        result = torch_run(o, folder, runner, p, m, schedule,
                                           prefix)
                except subprocess.TimeoutExpired:
                    result = "timeout (%s.*)" % prefix
                if isinstance(result, str):
                    entry["error"] = result
                    continue
                if around:
                    around.append(machine_now(products_at[m], around_log))
                    entry.setdefault("around_runs", []).append(
                        max(around) if all(around) else None)
                entry["runs"].append(result[0])
                entry["losses"] = result[1]
                if runner in ("pipecc", "pipecc-blas"):
                    entry["memory"], entry["timers"] = result[2], result[3]
                    entry.setdefault("timers_runs", []).append(result[3])
                    entry["gemms"] = result[4]
                    twin = results.get((model, "pipecc", p, m, schedule), {})
                    if twin.get("predicted"):
                        entry.setdefault("predicted_runs", []).append(
                            twin["predicted"])
        if features:
            extra[model]["features"] = features
        extra[model]["peaks"] = measure_peaks(torch, o, full, example, model,
                                              best, profile_rate)
        extra[model]["best"] = best
        # The best of the invocation for the step's products through
        # pipecc's entry points (the peak's timings and the runs' "around"
        # ones), the bar machine_now's readings are held against.
        extra[model]["entry_best"] = {
            m: entry_point_rate(products, best_rates(PIPECC_RATES,
                                                     AROUND_RATES))
            for m, products in products_at.items()}
        extra[model]["profile_rounds"] = [
            (i, rate) for name, i, rate in profile_rounds if name == model]
        # The models done so far, in case a later one is stopped.
        partial = list(lines)
        report(o, results, extra, cores,
               lambda text="": partial.append(text))
        write_table(out, partial)
    report(o, results, extra, cores, say)
    say()
    say("load average at end: %s" % open("/proc/loadavg").read().split()[:3])
    write_table(out, lines)
    print("table written to %s" % os.path.join(out, "table.md"))


def write_table(out, lines):
    path = os.path.join(out, "table.md")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def report(o, results, extra, cores, say):
    w = o["warmup"]
    for model in extra:
        x = extra[model]
        rows = [(k, v) for k, v in results.items() if k[0] == model]
        say()
        say("## %s" % model)
        say()
        say("model FLOPs per step %.3f GFLOP (%s); single-core sgemm peak "
            "for the model's matmul shapes (each product of the step at the "
            "best of torch%s%s at that shape, then the step's products at "
            "those rates; the attention's batched products by torch.bmm%s), "
            "hot (torch.mm on the same operands every call) "
            "and cold (torch with the step's large operand rotated through "
            "64 MiB: the weight of x W^T and dY W, the accumulator of the "
            "weight gradient, added into with beta = 1 as in the step): %s"
            % (x["flops"] / 1e9, x["flops_source"],
               " and pipecc profile's rate (cold; for products by a weight "
               "also its packed-weight rate)" if x["profiled"] else "",
               " and pipecc's own entry points "
               "(pipecc-profile-host --products, hot and cold)"
               if PIPECC_HOST[0] else "",
               " and pipecc_rt_sgemm_batched" if PIPECC_HOST[0] else "",
               ", ".join("M=%d hot %.1f, cold %.1f GFLOP/s" % (m, hot, cold)
                         for m, (hot, cold) in sorted(x["peaks"].items()))))
        say()
        if x.get("profile_rounds"):
            say("`pipecc profile` again before each round of runs, pipecc "
                "compiled again with it (PROFILE_ONCE=1: one profile): best "
                "matmul GFLOP/s per round %s; predicted ms is the median of "
                "the rounds' predictions, measured/predicted the median "
                "(min-max) of each run against its round's prediction"
                % ", ".join("%d: %.1f" % (i, rate or 0)
                            for i, rate in x["profile_rounds"]))
            say()
        say("| runner | P | M | schedule | median ms | spread ms (min-max) "
            "| pipecc/PyTorch | GFLOP/s | % of hot peak x min(P, cores) "
            "| predicted ms | measured/predicted |")
        say("|---|---|---|---|---|---|---|---|---|---|---|")
        medians = {}
        for (m_, runner, p, m, schedule), e in rows:
            if e["runs"]:
                medians[(runner, p, m, schedule)] = median_spread(e["runs"],
                                                                  w)
        for (m_, runner, p, m, schedule), e in rows:
            stats = medians.get((runner, p, m, schedule))
            if not stats:
                say("| %s | %d | %d | %s | n/a (%s) | | | | | | |"
                    % (runner, p, m, schedule, e["error"] or "no steps"))
                continue
            med, lo, hi = stats
            ratio = "n/a"
            if runner in ("pipecc", "pipecc-blas"):
                peer = ("eager", 1, m, "-") if p == 1 else \
                    ("torch", p, m, schedule)
                if peer in medians:
                    ratio = "%.2f" % (med / medians[peer][0])
            gflops = x["flops"] / med / 1e9
            peak = (x["peaks"].get(m) or x["peaks"].get(o["microbatches"]))[0]
            predicted = e.get("predicted") if runner == "pipecc" else None
            accuracy = "%.2f" % (med / predicted) if predicted else ""
            if predicted and len(e.get("predicted_runs", [])) == \
                    len(e["runs"]) > 1:
                # Each run against the prediction from its round's profile.
                ratios = [statistics.median(times[w:] or times) / pred
                          for times, pred in zip(e["runs"],
                                                 e["predicted_runs"])]
                accuracy = "%.2f (%.2f-%.2f)" % (statistics.median(ratios),
                                                 min(ratios), max(ratios))
                predicted = statistics.median(e["predicted_runs"])
            spread = "%s-%s" % (fmt_ms(lo), fmt_ms(hi))
            if len(e["runs"]) < o["repeats"]:
                spread += " (%d of %d runs: %s)" % (
                    len(e["runs"]), o["repeats"], e["error"])
            say("| %s | %d | %d | %s | %s | %s | %s | %.1f | %.0f%% | %s "
                "| %s |" % (runner, p, m, schedule, fmt_ms(med), spread,
                            ratio, gflops,
                            100 * gflops / (peak * min(p, cores)),
                            fmt_ms(predicted) if runner == "pipecc" else "",
                            accuracy))
        split = ["P=%d M=%d %s" % (p, m, schedule)
                 for (m_, runner, p, m, schedule), e in rows
                 if runner == "pipecc" and e.get("split")]
        if split:
            say()
            say("pipecc runs each backward as B then W (pipeline.json "
                "split_backward; `--split-backward auto` where the predicted "
                "step is shorter for it, or the schedule needs it) in: %s"
                % ", ".join(split))
        say()
        say("Losses (mean over the batch): step 1 and step %d" % o["steps"])
        say()
        # The reference: eager at M = 1, else the first runner with losses.
        ref, ref_name = next(
            ((e["losses"][0], "%s P=%d M=%d" % (r, p, m))
             for (m_, r, p, m, s), e in sorted(
                 rows, key=lambda row: row[0][1:3] != ("eager", 1))
             if e["losses"]), (None, "n/a"))
        say("| runner | P | M | schedule | step 1 | step %d | step 1 - %s |"
            % (o["steps"], ref_name))
        say("|---|---|---|---|---|---|---|")
        for (m_, runner, p, m, schedule), e in rows:
            ls = e["losses"]
            if not ls:
                say("| %s | %d | %d | %s | n/a | n/a | |"
                    % (runner, p, m, schedule))
                continue
            say("| %s | %d | %d | %s | %.6f | %.6f | %s |"
                % (runner, p, m, schedule, ls[0], ls[-1],
                   "%.1e" % (ls[0] - ref) if ref is not None else "n/a"))
        say()
        say("pipecc per rank: buffer plan (pipeline.json memory_plan "
            "arena_bytes) beside measured peak resident memory "
            "(`out/launch --memory`)")
        say()
        say("The rest of the resident set: the stage workspace (a static "
            "buffer beside the arena), the packed weight copies "
            "(docs/design.md, \"Packed weights\"), the executable and its "
            "libraries.")
        say()
        say("| P | M | schedule | rank | plan MiB | stage workspace MiB "
            "| packed weights MiB | peak RSS MiB |")
        say("|---|---|---|---|---|---|---|---|")
        for (m_, runner, p, m, schedule), e in rows:
            if runner != "pipecc" or "arena" not in e:
                continue
            memory = e.get("memory") or {}
            for rank in range(p):
                plan = e["arena"][rank] if rank < len(e["arena"]) else None
                _, peak, workspace, packed = memory.get(
                    rank, (None, None, None, None))
                say("| %d | %d | %s | %d | %s | %s | %s | %s |" % (
                    p, m, schedule, rank,
                    "%.1f" % (plan / 2**20) if plan else "n/a",
                    "%.1f" % (workspace / 2**20) if peak else "n/a",
                    "%.1f" % (packed / 2**20) if peak else "n/a",
                    "%.1f" % (peak / 2**20) if peak else "n/a"))
        features = x.get("features", {})
        say()
        say("pipecc `out/launch --timers` (time split, sgemm GFLOP/s), last "
            "run of each configuration:%s" % (
                "" if features.get("--timers") else " n/a"))
        for (m_, runner, p, m, schedule), e in rows:
            timers = e.get("timers")
            if runner not in ("pipecc", "pipecc-blas") or \
                    not features.get("--timers"):
                continue
            say()
            say("%sP=%d M=%d %s: %s" % ("pipecc-blas " if runner != "pipecc"
                                        else "", p, m, schedule,
                                        "" if timers else
                                      "n/a (nothing printed)"))
            if timers:
                # The last lines (the last step's, where printed per step);
                # the log has them all.
                shown = timers[-4 * p:]
                # Each rank's median step (--timers' median line).
                rates = [float(r) for r in GFLOPS.findall("\n".join(timers))]
                cpu_rates = [float(r) for r in
                             CPU_GFLOPS.findall("\n".join(timers))]
                say("```")
                for line in shown:
                    say(line)
                say("```")
                if len(shown) < len(timers):
                    say("(last %d of %d lines; all in runs/%s.*.log)" % (
                        len(shown), len(timers),
                        config_name(model, runner, p, m, schedule)))
                hot, cold = x["peaks"].get(m)

                def against_peaks(values):
                    return ", ".join("%.1f (%.0f%%; %.0f%%)" % (
                        r, 100 * r / hot, 100 * r / cold) for r in values)
                say("sgemm GFLOP/s of each rank's median step, against the "
                    "best rate for the model's shapes (hot; cold): %s" % (
                        against_peaks(rates) if rates else "n/a"))
                if cpu_rates:
                    # Ranks pinned to a shared CPU: the wall time above
                    # holds the other ranks' time slices.
                    say("the same in the ranks' CPU time (ranks sharing a "
                        "CPU): %s" % against_peaks(cpu_rates))
        report_matmul_runs(rows, x, say, w)
        report_products(rows, x, say)
        if not features.get("--threads"):
            say()
            say("(`out/launch --threads` n/a: OPENBLAS_NUM_THREADS=1 sets "
                "one thread per rank)")


def report_matmul_runs(rows, x, say, warmup):
    """Per pipecc configuration, each run's ranks: the median step's sgemm
    rate (`--timers`) against the hot best rate for the model's shapes at
    its M, the measure of issue 10's matmul criterion, with the lowest
    rank of all runs. Where ranks share a CPU (they print their products'
    CPU time) the CPU-time rate: the wall time holds other ranks' slices.
    Below it, how fast the machine itself was in each round: PyTorch
    eager's median step (the round's first runs, one core) against its
    fastest round; a slow phase of a shared host slows every runner of
    the round it falls in."""
    done = [(k, e) for k, e in rows
            if k[1] == "pipecc" and e.get("timers_runs")]
    if not done:
        return
    say()
    say("pipecc's matmuls in every run: each rank's median-step sgemm "
        "GFLOP/s against the hot best rate for the model's shapes, ranks "
        "separated by /")
    say()
    table = []
    for (_, _, p, m, schedule), e in done:
        hot = x["peaks"].get(m, (None, None))[0]
        if not hot:
            continue
        cells, by_run, cpu_time = [], [], False
        for timers in e["timers_runs"]:
            rates, in_cpu_time = rank_rates(timers)
            cpu_time = cpu_time or in_cpu_time
            shares = [100 * r / hot for r in rates]
            cells.append("/".join("%.0f%%" % v for v in shares) or "n/a")
            by_run.append(shares)
        table.append(([str(p), str(m), schedule,
                       "CPU time" if cpu_time else "wall"], cells, by_run))
    say_runs_table(say, ["P", "M", "schedule", "rate"], "run %d", table)
    report_matmul_around(done, x, say)
    for (_, runner, p, m, _), e in rows:
        if runner != "eager" or len(e.get("runs", [])) < 2:
            continue
        medians = run_medians(e["runs"], warmup)
        say()
        say("the machine in each round: PyTorch eager P=%d M=%d's median "
            "step, its fastest round's against this round's: %s" % (
                p, m, ", ".join("run %d %.0f%%" % (i + 1,
                                                   100 * min(medians) / v)
                                for i, v in enumerate(medians))))


def rank_rates(timers):
    """Each rank's median-step sgemm GFLOP/s of one run (`--timers`), in
    CPU time where the ranks print it (they share a CPU), and whether it
    is."""
    text = "\n".join(timers)
    rates = [float(r) for r in CPU_GFLOPS.findall(text)]
    if rates:
        return rates, True
    return [float(r) for r in GFLOPS.findall(text)], False


def report_matmul_around(done, x, say):
    """report_matmul_runs's table again, with the machine's speed around
    each run taken out: before and after every pipecc run, pipecc's entry
    points time the step's products again (machine_now, the better of the
    two readings); against the best reading of the invocation that is how
    fast the machine multiplied then, and each rank's rate is held
    against the hot best for the model's shapes scaled by it. The first
    table's bar is the invocation's best moment; this one's is the best
    moment around the run."""
    rows = [(k, e) for k, e in done if e.get("around_runs")]
    if not rows:
        return
    say()
    say("The same against the machine around each run: before and after "
        "every pipecc run, pipecc's entry points time the step's products "
        "again (`pipecc-profile-host --products --hot`, the better of the "
        "two; each product's rates in OUT/runs/around.txt); \"machine\" is "
        "that rate against the invocation's best for the same products "
        "through the same entry points (the peak's timings and every one "
        "around a run), and each rank's rate is held against the hot best "
        "rate for the model's shapes times it")
    say()
    table = []
    for (_, _, p, m, schedule), e in rows:
        hot = x["peaks"].get(m, (None, None))[0]
        entry_best = x.get("entry_best", {}).get(m)
        if not hot or not entry_best:
            continue
        cells, by_run = [], []
        for timers, around in zip(e["timers_runs"], e["around_runs"]):
            if not around:
                cells.append("n/a")
                continue
            machine = around / entry_best
            shares = [100 * r / (hot * machine)
                      for r in rank_rates(timers)[0]]
            cells.append("%.0f%%: %s" % (100 * machine, "/".join(
                "%.0f%%" % v for v in shares) or "n/a"))
            by_run.append(shares)
        table.append(([str(p), str(m), schedule], cells, by_run))
    say_runs_table(say, ["P", "M", "schedule"], "run %d: machine, ranks",
                   table)


def say_runs_table(say, heads, run_head, table):
    """A table with a row per configuration: its leading cells (`heads`
    their titles), a cell per run (`run_head` % run number, "n/a" where a
    run is missing), each rank's median over the runs and the lowest of
    all its shares (%). `table` rows: (leading cells, run cells, each
    run's shares by rank)."""
    runs = max([len(cells) for _, cells, _ in table] or [0])
    say("| %s | %s | median run, by rank | lowest |" % (
        " | ".join(heads), " | ".join(run_head % (i + 1)
                                      for i in range(runs))))
    say("|%s%s---|---|" % ("---|" * len(heads), "---|" * runs))
    for lead, cells, by_run in table:
        cells = cells + ["n/a"] * (runs - len(cells))
        every = [v for shares in by_run for v in shares]
        ranks = max([len(shares) for shares in by_run] or [0])
        medians = [statistics.median([shares[r] for shares in by_run
                                      if r < len(shares)])
                   for r in range(ranks)]
        say("| %s | %s | %s | %s |" % (
            " | ".join(lead), " | ".join(cells),
            "/".join("%.0f%%" % v for v in medians) or "n/a",
            "%.0f%%" % min(every) if every else "n/a"))


def report_products(rows, x, say):
    """Per pipecc configuration and rank (`out/launch --gemms`, the last
    run): the sgemm time of the steps after the first beside the same
    products at each one's best measured time (product_best_seconds, hot),
    and for P = 1 the products one by one."""
    best = x.get("best") or {}
    done = [(k, e) for k, e in rows if k[1] == "pipecc" and e.get("gemms")]
    if not done:
        return
    say()
    say("pipecc's matmuls by product (`out/launch --gemms`, last run, steps "
        "after the first) against each product's best rate measured here "
        "(hot; torch, pipecc profile and pipecc's entry points): in-step "
        "sgemm time, the same products at their best rates, and the ratio")
    say()
    say("| P | M | schedule | rank | sgemm ms | at best rates ms | % of best "
        "| products without a best rate |")
    say("|---|---|---|---|---|---|---|---|")
    for (_, _, p, m, schedule), e in done:
        for rank, products in sorted(e["gemms"].items()):
            spent = ideal = 0.0
            missing = 0
            for key, role, _, calls, seconds in products:
                entry = best_entry(key, role)
                if entry not in best:
                    missing += 1
                    continue
                spent += seconds
                ideal += calls * product_best_seconds(None, key, role, best)
            say("| %d | %d | %s | %d | %.1f | %.1f | %s | %d |" % (
                p, m, schedule, rank, spent * 1e3, ideal * 1e3,
                "%.0f%%" % (100 * ideal / spent) if spent else "n/a",
                missing))
    for (_, _, p, m, schedule), e in done:
        if p != 1:
            continue
        say()
        say("P=1 M=%d, product by product:" % m)
        say()
        say("| product (M x N x K, ops) | role | path | calls | ms | GFLOP/s "
            "| best GFLOP/s | % of best |")
        say("|---|---|---|---|---|---|---|---|")
        for key, role, path, calls, seconds in e["gemms"].get(0, []):
            flops = 2.0 * math.prod(key) * calls
            entry = best_entry(key, role)
            rate = flops / seconds / 1e9 if seconds else 0
            peak = (2.0 * math.prod(key) / product_best_seconds(
                None, key, role, best) / 1e9) if entry in best else None
            mkn = key[1:] if role == "batched" else key
            name = "%s%dx%dx%d" % ("%d x " % key[0] if role == "batched"
                                   else "", mkn[0], mkn[2], mkn[1])
            say("| %s | %s | %s | %d | %.1f | %.1f | %s | %s |" % (
                name, role, path, calls, seconds * 1e3, rate,
                "%.1f" % peak if peak else "n/a",
                "%.0f%%" % (100 * rate / peak) if peak else "n/a"))


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    command, args = sys.argv[1], sys.argv[2:]
    try:
        if command == "plan":
            cmd_plan()
        elif command == "run" and len(args) == 1:
            cmd_run(args[0])
        elif command == "eager":
            cmd_eager(args)
        elif command == "pipelining":
            cmd_pipelining(args)
        else:
            print("bench-cpu: error: unknown subcommand '%s' (plan, run OUT, "
                  "eager, pipelining)" % command, file=sys.stderr)
            return 2
    except OptionError as error:
        print("bench-cpu: error: %s" % error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
