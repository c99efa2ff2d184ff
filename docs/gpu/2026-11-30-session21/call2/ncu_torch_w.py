# cuDNN's kernels for ResNet-50 b32 1x1 backward-weights (bf16, channels_last), under ncu
import torch
torch.backends.cudnn.benchmark = True
L = [(64,64,56),(64,256,56),(256,64,56),(256,128,56),(128,512,28),(512,128,28),(512,256,28),(256,1024,14),(1024,256,14)]
cl = torch.channels_last
for c, k, h in L:
    x = torch.randn(32, c, h, h, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    w = torch.randn(k, c, 1, 1, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    dy = torch.randn(32, k, h, h, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    f = lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])
    for _ in range(3): f()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"c{c}k{k}h{h}")
    torch.cuda.profiler.start()
    for _ in range(3): f()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    torch.cuda.nvtx.range_pop()
