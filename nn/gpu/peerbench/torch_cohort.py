"""PyTorch torch.func peer for `make bench-gpu`: the GPU engine's D-SUM round.

cells x workers copies of torch_peer.py's modules stacked along one leading axis;
vmap(grad_and_value(functional_call)) over the models (dropout different per model), each local
step compiled with torch.compile: gather the batch from the device-resident data by index
(indices uploaded per round, as ump does), gradients, the SUM update; then the gossip of x and v
(an einsum with each cell's mixing matrix). float32 with TF32 off. Prints one JSON line: samples/s
of each timed round, the first round's time (compilation included) and peak memory.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad_and_value, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peer import AGNewsBag, EmnistCNN, LeNet  # noqa: E402


def main():
    cfg = json.loads(sys.argv[1])
    C, n, K, B, rounds = cfg["cells"], cfg["workers"], cfg["local_steps"], cfg["batch"], cfg["rounds"]
    vocab, bag = cfg.get("vocab", 95812), cfg.get("bag_len", 40)
    M = C * n
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    name = cfg["model"]
    if name == "lenet-mnist":
        module, shape, classes = LeNet(1, 2), (1, 28, 28), 10
    elif name == "cnn-emnist":
        module, shape, classes = EmnistCNN(), (1, 28, 28), 62
    elif name == "embedding-bag-agnews":
        module, shape, classes = AGNewsBag(vocab), None, 4
    else:
        raise SystemExit("unknown model " + name)
    module = module.to(dev).train()
    g = torch.Generator().manual_seed(0)
    N = 120000 if shape is None else 60000
    if shape is None:
        data = torch.randint(vocab, (N, bag), generator=g, dtype=torch.int32).to(dev)
    else:
        data = torch.randint(256, (N,) + shape, generator=g, dtype=torch.uint8).to(dev)
    labels = torch.randint(classes, (N,), generator=g).to(dev)
    offsets = torch.arange(0, B * bag, bag, device=dev)

    def loss_fn(p, idx):
        x = data[idx]
        if shape is None:
            out = functional_call(module, p, (x.reshape(-1).long(), offsets))
        else:
            out = functional_call(module, p, ((x.float() / 255 - 0.1307) / 0.3081,))
        return F.cross_entropy(out, labels[idx])

    grads = vmap(grad_and_value(loss_fn), randomness="different")

    def step(x, v, idx, eta, alpha, beta):
        g, loss = grads(x, idx)
        vn = {k: x[k] - alpha * eta * g[k] for k in x}
        x = {k: x[k] - eta * g[k] + beta * (vn[k] - v[k]) for k in x}
        return x, vn, loss

    ring = torch.zeros(n, n)
    for i in range(n):
        for j in (i - 1, i, i + 1):
            ring[i, j % n] += 1 / 3
    mix = ring.expand(C, n, n).contiguous().to(dev)

    def gossip(t):
        return torch.einsum("cij,cjp->cip", mix, t.reshape(C, n, -1)).reshape(t.shape)

    try:
        try:
            step_c = torch.compile(step)
            mode = "compiled"
        except Exception:  # noqa: BLE001
            step_c, mode = step, "eager"
        x = {k: p.detach().unsqueeze(0).expand(M, *p.shape).contiguous() for k, p in module.named_parameters()}
        v = {k: t.clone() for k, t in x.items()}
        rng = np.random.default_rng(0)
        rates, compile_s = [], 0.0
        for r in range(rounds + 2):
            idx_all = rng.integers(0, N, (K, M, B))
            start = time.perf_counter()
            idx_dev = torch.from_numpy(idx_all).to(dev)
            with torch.no_grad():
                for k in range(K):
                    try:
                        x, v, loss = step_c(x, v, idx_dev[k], 0.01, 2.0, 0.9)
                    except Exception:  # noqa: BLE001 - torch.compile could not handle it: eager
                        if step_c is step:
                            raise
                        step_c, mode = step, "eager"
                        x, v, loss = step_c(x, v, idx_dev[k], 0.01, 2.0, 0.9)
                x = {k: gossip(t) for k, t in x.items()}
                v = {k: gossip(t) for k, t in v.items()}
            torch.cuda.synchronize()
            took = time.perf_counter() - start
            if r == 0:
                compile_s = took
            elif r >= 2:
                rates.append(M * K * B / took)
        print(json.dumps({"samples_per_s": rates, "compile_s": compile_s, "mode": mode,
                          "peak_bytes": torch.cuda.max_memory_allocated()}), flush=True)
    except Exception as e:  # noqa: BLE001 - out of memory, mostly: report it as the row
        print(json.dumps({"error": type(e).__name__ + ": " + str(e).splitlines()[0][:160]}), flush=True)


if __name__ == "__main__":
    main()
