"""PyTorch peer for `make bench`: the same round as ump's CPU engine.

n workers, each its own nn.Module and torch.optim.SGD (as researchers write
it), K local steps of batch B on random data of the model's input shape,
on cfg["device"] (cpu by default; cuda for the GPU engine's comparison).
Prints one JSON line per model: samples/s of each timed round.
"""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self, channels, pad):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 6, 5, padding=pad)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.drop = nn.Dropout(0.5)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(self.drop(x))


class EmnistCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.drop1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(9216, 128)
        self.drop2 = nn.Dropout(0.5)
        self.fc2 = nn.Linear(128, 62)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.drop1(x), 1)
        x = self.drop2(F.relu(self.fc1(x)))
        return self.fc2(x)


class AGNewsBag(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, 64, mode="mean")
        self.fc = nn.Linear(64, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, tokens, offsets):
        return self.drop(self.fc(self.bag(tokens, offsets)))


def main():
    cfg = json.loads(sys.argv[1])
    torch.set_num_threads(cfg["threads"])
    torch.manual_seed(0)
    n, K, B, rounds = cfg["workers"], cfg["local_steps"], cfg["batch"], cfg["rounds"]
    dev = torch.device(cfg.get("device", "cpu"))
    # float32 throughout, as ump's engines (cuDNN would use TF32 for convolutions).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    for name in cfg["models"]:
        if name == "lenet-mnist":
            make, shape, classes = (lambda: LeNet(1, 2)), (1, 28, 28), 10
        elif name == "lenet-cifar10":
            make, shape, classes = (lambda: LeNet(3, 0)), (3, 32, 32), 10
        elif name == "cnn-emnist":
            make, shape, classes = EmnistCNN, (1, 28, 28), 62
        elif name == "embedding-bag-agnews":
            make, shape, classes = (lambda: AGNewsBag(cfg["vocab"])), None, 4
        else:
            raise SystemExit("unknown model " + name)
        models = [make().to(dev) for _ in range(n)]
        opts = [torch.optim.SGD(m.parameters(), lr=0.01) for m in models]
        if shape is None:
            L = cfg["bag_len"]
            data = [(torch.randint(cfg["vocab"], (B * L,), device=dev), torch.arange(0, B * L, L, device=dev),
                     torch.randint(classes, (B,), device=dev)) for _ in range(K)]
        else:
            data = [(torch.randn(B, *shape, device=dev), torch.randint(classes, (B,), device=dev)) for _ in range(K)]
        rates = []
        for r in range(rounds + 1):  # the first round warms up
            start = time.perf_counter()
            for m, opt in zip(models, opts):
                m.train()
                for batch in data:
                    opt.zero_grad()
                    loss = F.cross_entropy(m(*batch[:-1]), batch[-1])
                    loss.backward()
                    opt.step()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            if r > 0:
                rates.append(n * K * B / elapsed)
        print(json.dumps({"model": name, "samples_per_s": rates}), flush=True)


if __name__ == "__main__":
    main()
