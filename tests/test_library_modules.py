"""Library code by package layout (issue 19, item 4): a frame whose path ends in a module path of a known ML
distribution is library code wherever it lies (site-packages, an editable install, a source checkout of torch), and
a user's folder named like a package stays user code. On the real torch-neuronx graphs of ../shared/corpus/neuron,
whose users ran torch and torch_xla from source checkouts, `hlodiff compare` names only the programs' own files."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, need_shared
from helpers import cli
from hlodiff.dumps.installed_modules import installed_module_paths
from hlodiff.hlo import library_modules
from hlodiff.hlo.model import SourceFrame

NEURON = CORPUS.parent / "neuron"


@pytest.mark.parametrize("path,library", [
    # source checkouts, as the neuron corpus has them
    ("/home/ubuntu/kahfi/pytorch/torch/nn/functional.py", True),
    ("/home/ubuntu/kahfi/pytorch/torch/optim/adamw.py", True),
    ("/home/ubuntu/kahfi/xla_modified/pytorch/xla/torch_xla/core/xla_model.py", True),
    ("/home/ubuntu/kahfi/xla_modified/pytorch/xla/torch_xla/_patched_functions.py", True),
    # an editable install of jax, flax, optax and transformers from their repositories
    ("/home/dev/src/jax/jax/_src/api.py", True),
    ("/home/dev/src/jax/jax/_src/interpreters/pxla.py", True),
    ("/home/dev/flax/flax/linen/module.py", True),
    ("/home/dev/optax/optax/_src/alias.py", True),
    ("/home/dev/transformers/src/transformers/models/llama/modeling_llama.py", True),
    ("/opt/neuron/neuronx_distributed/parallel_layers/layers.py", True),
    ("/opt/neuron/torch_neuronx/xla_impl/ops.py", True),
    # user code: folders named like a package, files named like a library's module outside its package
    ("/home/user/project/jax/train.py", False),
    ("/home/user/project/torch/utils/data.py", False),
    ("/home/ubuntu/kahfi/dp_bert_hf_pretrain/adamw_fp32_optim_params.py", False),
    ("/home/user/project/models/llama/modeling_llama.py", False),
    ("/home/user/project/nn/functional.py", False),
    ("functional.py", False),
])
def test_package_layout_decides(path, library):
    assert SourceFrame(path, 1).is_library is library


@pytest.mark.parametrize("distribution", library_modules.DISTRIBUTIONS)
def test_the_shipped_list_holds_each_distribution(distribution):
    """The list shipped with hlodiff names every distribution with its modules (the dumps come from machines where
    they are installed, hlodiff often runs where they are not)."""
    assert distribution in library_modules.shipped_versions()
    shipped = set(library_modules._shipped())
    top = {"torch": "torch/", "torch_xla": "torch_xla/", "jax": "jax/_src/", "jaxlib": "jaxlib/", "flax": "flax/",
           "optax": "optax/", "transformers": "transformers/models/", "torch_neuronx": "torch_neuronx/",
           "neuronx_distributed": "neuronx_distributed/parallel_layers/"}[distribution]
    assert sum(p.startswith(top) for p in shipped) >= 5


def test_the_shipped_list_alone_knows_torch(monkeypatch):
    """Where torch is not installed, the shipped list still knows its modules."""
    monkeypatch.setattr(library_modules, "_installed", lambda: [])
    library_modules.module_paths.cache_clear()
    library_modules.top_level_names.cache_clear()
    try:
        assert library_modules.module_path_in("/src/pytorch/torch/nn/functional.py".split("/")) == \
            "torch/nn/functional.py"
        assert library_modules.module_path_in("/home/user/project/jax/train.py".split("/")) is None
    finally:
        library_modules.module_paths.cache_clear()
        library_modules.top_level_names.cache_clear()


NEURON_PAIRS = [
    ("bert__bert_single_graph_2", "bert__bert_dp_graph_2"),
    ("mlp__mlp_dp_1_updated", "mlp__mlp_dp_2_updated"),
    ("qwb_linear_model__pp_1_broken", "qwb_linear_model__pp_1_final"),
    ("mlp__mini_mlp_single", "mlp__mini_mlp_dp"),
]
LIBRARY_FOLDERS = ("/pytorch/torch/", "/torch_xla/", "site-packages/", "/transformers/", "/neuronx_distributed/",
                   "/torch_neuronx/")


@pytest.mark.parametrize("left,right", NEURON_PAIRS, ids=lambda name: name)
def test_neuron_pairs_name_only_the_programs_own_files(left, right):
    need_shared(NEURON)
    result = cli("compare", str(NEURON / f"{left}.hlo"), str(NEURON / f"{right}.hlo"), "--json")
    assert result.exit_code == 1, result.output
    located: set[str] = set()
    library: set[str] = set()
    _collect(json.loads(result.output), located, library)
    assert located, "the pair should be located somewhere"
    assert not [f for f in located if any(folder in f for folder in LIBRARY_FOLDERS)]
    # the torch / torch_xla frames are still there, as the secondary library locations
    assert any("/pytorch/torch/" in f or "/torch_xla/" in f for f in library)


def _collect(node, located: set[str], library: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("locations", "library_locations") and isinstance(value, list):
                target = located if key == "locations" else library
                target.update(f["file"] for f in value if isinstance(f, dict) and "file" in f)
            else:
                _collect(value, located, library)
    elif isinstance(node, list):
        for value in node:
            _collect(value, located, library)


def test_an_installed_version_the_shipped_list_lacks_adds_its_modules(tmp_path, monkeypatch):
    """A torch installed here in another version than the shipped list's: its RECORD's modules count too, read
    from the file list without importing torch."""
    info = tmp_path / "torch-9.9.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("torch/_brand_new/kernels.py,sha256=x,10\n"
                                 "torch-9.9.0.dist-info/METADATA,sha256=y,20\n"
                                 "../../bin/torchrun,sha256=z,30\n")
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    library_modules.module_paths.cache_clear()
    library_modules.top_level_names.cache_clear()
    try:
        assert installed_module_paths() == ["torch/_brand_new/kernels.py"]
        assert library_modules._installed() == ["torch/_brand_new/kernels.py"]  # handed down by dumps
        assert library_modules.module_path_in("/src/pytorch/torch/_brand_new/kernels.py".split("/"))
    finally:
        library_modules.module_paths.cache_clear()
        library_modules.top_level_names.cache_clear()
