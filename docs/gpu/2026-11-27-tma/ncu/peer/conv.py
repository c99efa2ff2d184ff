import sys, torch
n, c, h, k, r, s = (int(v) for v in sys.argv[1:7])
torch.backends.cudnn.benchmark = True
x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
w = torch.randn(k, c, r, r, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
for _ in range(20):
    y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for _ in range(3):
    y = torch.nn.functional.conv2d(x, w, padding=r // 2, stride=s)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
