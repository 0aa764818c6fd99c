"""Where does a tiny Triton candidate's time go in the sandbox? Plain process vs instruments."""
import collections, importlib.util, json, sys, time
import torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

prob = load("tests/data/problems/scaled_residual.py", "p")
cand = load("tests/data/candidates/scaled_residual/good_fused.py", "c")
torch.manual_seed(0)
ref = prob.Model(*prob.get_init_inputs()).cuda().eval()
new = cand.ModelNew(*prob.get_init_inputs()).cuda().eval()
new.load_state_dict(ref.state_dict())
inputs = [t.cuda() for t in prob.get_inputs()]
from kernelopt_jupyter.verify.timing import _Timer
timer = _Timer("cuda")
res = {}

def med(fn, n=300):
    ts = []
    for i in range(n + 20):
        timer.flush()
        ms, _ = timer.time(fn, inputs)
        if i >= 20: ts.append(ms)
    ts.sort(); return ts[len(ts) // 2]

def host(fn, n=300):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(n): fn(*inputs)
    torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1e3 / n

def row(tag):
    res[tag] = {"eager": med(ref), "cand": med(new), "cand_host_loop": host(new), "eager_host_loop": host(ref)}
    print(tag, res[tag], flush=True)

row("plain")
events = collections.Counter(); counting = [False]
def hook(e, a):
    if counting[0]: events[e] += 1
sys.addaudithook(hook)
row("audit_hook")
counting[0] = True; med(new, 50); counting[0] = False
res["audit_events_per_50_cand_calls"] = dict(events.most_common(10)); print(res["audit_events_per_50_cand_calls"])
from kernelopt_jupyter.verify.launches import LaunchRecorder
LaunchRecorder("cuda").install()
row("launch_recorder")
from kernelopt_jupyter.verify.sandbox import Sandbox
box = Sandbox(); box.device = "cuda"; box.install_process_watch(); box._watch_graph_replays()
row("process_watch")
box.watching = True
row("process_watch_watching")
box.watching = False
import cProfile, pstats, io
pr = cProfile.Profile(); pr.enable(); host(new, 200); pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15); print(s.getvalue()[:3000])
json.dump(res, open(sys.argv[1], "w"), indent=1)
