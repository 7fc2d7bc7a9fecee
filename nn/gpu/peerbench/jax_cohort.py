"""JAX peer for `make bench-gpu`: the GPU engine's D-SUM round, as a JAX user writes it.

cells x workers models (one leading axis), one jit-compiled round with donated state:
lax.scan over the K local steps of vmap(value_and_grad(loss)) over the models, each step
gathering its batch from the device-resident data by index (indices uploaded per round, as
ump does) and drawing dropout masks on the device; then the SUM update and the gossip of x and
v (an einsum with each cell's mixing matrix). float32 with TF32 off. Prints one JSON line:
samples/s of each timed round, the first round's time (compilation included) and peak memory.
"""
import json
import os
import sys
import time

os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
HI = jax.lax.Precision.HIGHEST


def uniform(key, shape, fan_in):
    b = 1 / np.sqrt(fan_in)
    return jax.random.uniform(key, shape, jnp.float32, -b, b)


def conv_p(key, cin, cout, k):
    k1, k2 = jax.random.split(key)
    return {"w": uniform(k1, (cout, cin, k, k), cin * k * k), "b": uniform(k2, (cout,), cin * k * k)}


def dense_p(key, fin, fout):
    k1, k2 = jax.random.split(key)
    return {"w": uniform(k1, (fin, fout), fin), "b": uniform(k2, (fout,), fin)}


def conv(p, x, pad):
    y = jax.lax.conv_general_dilated(x, p["w"], (1, 1), [(pad, pad), (pad, pad)],
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"), precision=HI)
    return y + p["b"][None, :, None, None]


def dense(p, x):
    return jnp.dot(x, p["w"], precision=HI) + p["b"]


def pool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


relu = jax.nn.relu


def model(name, vocab):
    """(init(key), apply(params, x, masks), dropout (shape, p) list, input shape, classes)."""
    if name == "lenet-mnist":
        def init(key):
            k = jax.random.split(key, 5)
            return {"c1": conv_p(k[0], 1, 6, 5), "c2": conv_p(k[1], 6, 16, 5), "f1": dense_p(k[2], 400, 120),
                    "f2": dense_p(k[3], 120, 84), "f3": dense_p(k[4], 84, 10)}

        def apply(p, x, masks):
            x = relu(pool(conv(p["c1"], x, 2)))
            x = relu(pool(conv(p["c2"], x, 0)))
            x = x.reshape(x.shape[0], -1)
            x = relu(dense(p["f2"], relu(dense(p["f1"], x))))
            return dense(p["f3"], x * masks[0])
        return init, apply, [((84,), 0.5)], (1, 28, 28), 10
    if name == "cnn-emnist":
        def init(key):
            k = jax.random.split(key, 4)
            return {"c1": conv_p(k[0], 1, 32, 3), "c2": conv_p(k[1], 32, 64, 3), "f1": dense_p(k[2], 9216, 128),
                    "f2": dense_p(k[3], 128, 62)}

        def apply(p, x, masks):
            x = relu(conv(p["c1"], x, 0))
            x = relu(pool(conv(p["c2"], x, 0))) * masks[0]
            x = relu(dense(p["f1"], x.reshape(x.shape[0], -1))) * masks[1]
            return dense(p["f2"], x)
        return init, apply, [((64, 12, 12), 0.25), ((128,), 0.5)], (1, 28, 28), 62
    if name == "embedding-bag-agnews":
        def init(key):
            k = jax.random.split(key, 2)
            return {"emb": jax.random.normal(k[0], (vocab, 64), jnp.float32), "f": dense_p(k[1], 64, 4)}

        def apply(p, tokens, masks):
            return dense(p["f"], p["emb"][tokens].mean(axis=1)) * masks[0]
        return init, apply, [((4,), 0.5)], None, 4
    raise SystemExit("unknown model " + name)


def main():
    cfg = json.loads(sys.argv[1])
    C, n, K, B, rounds = cfg["cells"], cfg["workers"], cfg["local_steps"], cfg["batch"], cfg["rounds"]
    vocab, bag = cfg.get("vocab", 95812), cfg.get("bag_len", 40)
    M = C * n
    init, apply, drops, shape, classes = model(cfg["model"], vocab)
    rng = np.random.default_rng(0)
    N = 120000 if shape is None else 60000
    if shape is None:
        data = jnp.asarray(rng.integers(0, vocab, (N, bag), dtype=np.int32))
    else:
        data = jnp.asarray(rng.integers(0, 256, (N,) + shape, dtype=np.uint8))
    labels = jnp.asarray(rng.integers(0, classes, (N,), dtype=np.int32))

    def loss_fn(p, idx, key):
        x = data[idx]
        if shape is not None:
            x = (x.astype(jnp.float32) / 255 - 0.1307) / 0.3081
        keys = jax.random.split(key, len(drops))
        masks = [jax.random.bernoulli(k, 1 - q, (B,) + s).astype(jnp.float32) / (1 - q) for k, (s, q) in zip(keys, drops)]
        logits = apply(p, x, masks)
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, labels[idx][:, None], axis=1).mean()

    grads = jax.vmap(jax.value_and_grad(loss_fn))
    tmap = jax.tree_util.tree_map

    def round_fn(x, v, mix, idx, key, eta, alpha, beta):
        keys = jax.random.split(key, K * M).reshape(K, M)

        def step(carry, inp):
            x, v = carry
            idx_k, keys_k = inp
            loss, g = grads(x, idx_k, keys_k)
            vn = tmap(lambda a, b: a - alpha * eta * b, x, g)
            x = tmap(lambda a, b, c, d: a - eta * b + beta * (c - d), x, g, vn, v)
            return (x, vn), loss

        (x, v), losses = jax.lax.scan(step, (x, v), (jnp.swapaxes(idx, 0, 1), keys))

        def gossip(t):
            return jnp.einsum("cij,cj...->ci...", mix, t.reshape((C, n) + t.shape[1:]), precision=HI).reshape(t.shape)
        return tmap(gossip, x), tmap(gossip, v), losses

    run = jax.jit(round_fn, donate_argnums=(0, 1))
    try:
        p0 = init(jax.random.key(1))
        x = tmap(lambda a: jnp.broadcast_to(a, (M,) + a.shape).copy(), p0)
        v = tmap(lambda a: a.copy(), x)
        ring = np.zeros((n, n), np.float32)
        for i in range(n):
            for j in (i - 1, i, i + 1):
                ring[i, j % n] += 1 / 3
        mix = jnp.asarray(np.broadcast_to(ring, (C, n, n)).copy())
        rates, compile_s = [], 0.0
        key = jax.random.key(2)
        for r in range(rounds + 2):
            idx = rng.integers(0, N, (M, K, B), dtype=np.int32)
            start = time.perf_counter()
            x, v, losses = run(x, v, mix, jnp.asarray(idx), jax.random.fold_in(key, r), 0.01, 2.0, 0.9)
            losses.block_until_ready()
            took = time.perf_counter() - start
            if r == 0:
                compile_s = took
            elif r >= 2:
                rates.append(M * K * B / took)
        peak = jax.devices()[0].memory_stats().get("peak_bytes_in_use", 0)
        print(json.dumps({"samples_per_s": rates, "compile_s": compile_s, "peak_bytes": peak}), flush=True)
    except Exception as e:  # out of memory, mostly: report it as the row
        print(json.dumps({"error": type(e).__name__ + ": " + str(e).splitlines()[0][:160]}), flush=True)


if __name__ == "__main__":
    main()
