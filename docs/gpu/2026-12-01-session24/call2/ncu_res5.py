# cuDNN's (PyTorch 2.11) kernels for ResNet-50 b32 res5 forward layers (bf16, channels_last), under
# ncu --profile-from-start off: each layer warmed (cudnn.benchmark picks), then one call profiled.
import torch
torch.backends.cudnn.benchmark = True
cl = torch.channels_last
layers = [("res5[b-c]_branch2b", 512, 7, 512, 3, 1, 1)]
for name, c, h, k, r, s, p in layers:
    x = torch.randn(32, c, h, h, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    w = torch.randn(k, c, r, r, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    f = lambda: torch.nn.functional.conv2d(x, w, None, s, p)
    for _ in range(5): f()
    torch.cuda.synchronize()
    print(name, flush=True)
    torch.cuda.profiler.start(); f(); torch.cuda.synchronize(); torch.cuda.profiler.stop()
