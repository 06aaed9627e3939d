"""A file with Windows line endings (CRLF) gives an output whose every line ends with CRLF, as the input's do
(issue 33), and computes what the original computes under every option set, at 1, 2 and 4 threads."""
from __future__ import annotations

import pytest
from test_int_types import _name, check_program
from test_reliability_options import EACH, MATRIX

CRLF = ("#include <stdio.h>\n#define N 40\ndouble A[N][N], B[N][N];\nint main(void) {\n  int n = N;\n"
        "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * 7 + j) % 5;\n"
        "#pragma scop\n  for (int t = 0; t < 3; t++) {\n    for (int i = 1; i < n - 1; i++)\n"
        "      for (int j = 1; j < n - 1; j++)\n        B[i][j] = (A[i - 1][j] + A[i][j] + A[i + 1][j]) / 3.0;\n"
        "    for (int i = 1; i < n - 1; i++)\n      for (int j = 1; j < n - 1; j++)\n        A[i][j] = B[i][j];\n"
        "  }\n#pragma endscop\n"
        "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) printf(\"%.17g\\n\", A[i][j]);\n"
        "  return 0;\n}\n").replace("\n", "\r\n")


def check(tmp_path, options: list[str], monkeypatch) -> None:
    out = check_program(tmp_path, "crlf", CRLF, options, None, monkeypatch)
    data = out.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 20, data.decode()


@pytest.mark.parametrize("options", EACH)
def test_crlf_input_gives_crlf_output_under_each_option(tmp_path, monkeypatch, options):
    check(tmp_path, options, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("options", MATRIX, ids=_name)
def test_crlf_input_gives_crlf_output_under_the_option_matrix(tmp_path, monkeypatch, options):
    check(tmp_path, options, monkeypatch)


def test_crlf_input_gives_crlf_cuda_output(tmp_path):
    from test_random_nests import run_main
    src, out = tmp_path / "crlf.c", tmp_path / "crlf.cu"
    src.write_bytes(CRLF.encode())
    rc, err = run_main(["optimize", str(src), "--target", "cuda", "-o", str(out)])
    assert rc == 0, err
    data = out.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
