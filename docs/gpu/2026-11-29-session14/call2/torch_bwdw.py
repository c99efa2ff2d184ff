# The backward-weights of a few ResNet-50 b32 layers through PyTorch (cuDNN, benchmark mode), in
# bf16 channels-last, many times: run under ncu to see which kernels cuDNN picked.
import sys, torch
torch.backends.cudnn.benchmark = True
layers = [(512, 28, 128, 1, 1), (256, 14, 1024, 1, 1), (512, 7, 2048, 1, 1), (128, 28, 128, 3, 1)]
b = int(sys.argv[1]) if len(sys.argv) > 1 else 32
for c, hw, k, f, s in layers:
    x = torch.randn(b, c, hw, hw, device='cuda', dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, f, f, device='cuda', dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    oh = (hw + 2 * (f // 2) - f) // s + 1
    dy = torch.randn(b, k, oh, oh, device='cuda', dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    for i in range(30):
        gw = torch.ops.aten.convolution_backward(dy, x, w, None, (s, s), (f // 2, f // 2), (1, 1),
                                                  False, (0, 0), 1, (False, False, True))[1]
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"layer c{c} hw{hw} k{k}")
    for i in range(3):
        gw = torch.ops.aten.convolution_backward(dy, x, w, None, (s, s), (f // 2, f // 2), (1, 1),
                                                  False, (0, 0), 1, (False, False, True))[1]
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print("done", c, hw, k, f, flush=True)
