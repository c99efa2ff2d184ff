# cuDNN's kernels for ResNet-50 b256 res2a_branch2b forward (64->64 3x3 @56, bf16, channels_last), under ncu;
# then one 1x1 backward-weights layer (128->512 @28, b32) for a full profile of cuBLAS's kernel.
import sys
import torch
torch.backends.cudnn.benchmark = True
cl = torch.channels_last
def run(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(2): f()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
if sys.argv[1] == "fwd":
    x = torch.randn(256, 64, 56, 56, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    w = torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    run(lambda: torch.nn.functional.conv2d(x, w, None, 1, 1))
else:
    c, k, h = 128, 512, 28
    x = torch.randn(32, c, h, h, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    w = torch.randn(k, c, 1, 1, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    dy = torch.randn(32, k, h, h, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    run(lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False]))
