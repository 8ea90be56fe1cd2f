"""The numerical core of the order-free fit (:mod:`.fit`): numpy and scipy.

The results become one sparse design matrix of distinct comparisons (a row per
kind of comparison with its count, a column per parameter), and Newton's method
solves the log posterior with the Hessian ``Xᵀ W X + prior``, whose pattern is
worked out once (:class:`Gram`) and refilled each step. The bots' model has one
parameter per bot, so it is factorised densely (Cholesky) each step and the
covariance is one solve against the last factor. The partnerships' model has a
parameter per partnership too, up to n(n-1)/2 of them: past
:data:`DENSE_PARAMETERS` it is solved by conjugate gradients and only the
variances the leaderboard shows are computed (:func:`pair_variances`).

Linear algebra runs on one thread (:func:`one_thread`): the harness shares its
cores with bots and referees, and OpenBLAS threads spinning against a loaded
machine made small products fifty times slower.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from scipy.special import erfc
from threadpoolctl import ThreadpoolController


class Result(Protocol):
    """One match as the fit reads it (:class:`.fit.Result`; not imported: fit.py imports this module)."""

    @property
    def seats(self) -> tuple[str, ...]: ...
    @property
    def ranks(self) -> tuple[int, ...]: ...
    @property
    def group(self) -> str: ...


#: The model's constants, as :mod:`.fit` states them (repeated here for the same reason).
SIGMA0 = 25.0 / 3
BETA = 25.0 / 6
PAIR_SIGMA = BETA

#: Up to this many parameters the pairs model is solved densely (exact); beyond, see :func:`pair_variances`.
DENSE_PARAMETERS = 1200

Vector = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Design:
    """Every result as side-vs-side comparisons, identical ones counted once.

    Row ``k`` (a kind of comparison) compares ``x[k] · θ`` against noise ``s[k]``
    with outcome ``y[k]`` and was seen ``count[k]`` times; a 200-match event of four
    bots has a few dozen kinds. ``members[c, k]`` counts kind ``k`` in duplicate group
    ``c``. Kinds and groups are numbered in sorted order, so every sum behind the fit
    (and with it the last bit of every number) is the same whatever order the results
    were stored in.
    """

    x: sp.csr_matrix
    y: Vector
    s: Vector
    count: Vector
    members: sp.csr_matrix
    clusters: int


def design(results: Sequence[Result], partnerships: bool, index: dict[str, int],
           pairs: dict[tuple[int, int], int] | None = None) -> Design:
    """Every result as comparisons over the parameters in ``index`` (bots) and ``pairs``.

    ``pairs`` maps a partnership, as its two bots' indices in ascending order, to its
    own parameter (the pairs model); without it the model has bots only.
    """
    width = len(index) + (len(pairs) if pairs is not None else 0)
    group_names = sorted({r.group for r in results})
    group_of = {g: i for i, g in enumerate(group_names)}
    match_cluster = np.array([group_of[r.group] for r in results], dtype=np.intp)
    if not results:
        empty = sp.csr_matrix((0, width))
        return Design(empty, np.zeros(0), np.zeros(0), np.zeros(0), sp.csr_matrix((0, 0)), 0)
    seats = np.array([[index[s] for s in r.seats] for r in results], dtype=np.intp)
    ranks = np.array([r.ranks for r in results], dtype=np.intp)
    if partnerships:
        side0 = np.sort(seats[:, [0, 2]], axis=1)
        side1 = np.sort(seats[:, [1, 3]], axis=1)
        y2 = np.where(ranks[:, 0] == ranks[:, 1], 1, 2 * (ranks[:, 0] < ranks[:, 1]))
        keys = np.column_stack([side0, side1, y2])
        cluster = match_cluster
        noise = 2 * BETA
    else:
        parts, clusters_of = [], []
        for i in range(seats.shape[1]):
            for j in range(i + 1, seats.shape[1]):
                keep = seats[:, i] != seats[:, j]
                yy = np.where(ranks[:, i] == ranks[:, j], 1, 2 * (ranks[:, i] < ranks[:, j]))
                parts.append(np.column_stack([seats[keep, i], seats[keep, j], yy[keep]]))
                clusters_of.append(match_cluster[keep])
        keys = np.concatenate(parts)
        cluster = np.concatenate(clusters_of)
        noise = math.sqrt(2) * BETA
    # One int64 per comparison (mixed radix), so that finding the kinds is a 1-d sort.
    radix = np.array([max(len(index), 1)] * (keys.shape[1] - 1) + [3], dtype=np.int64)
    if float(np.prod(radix.astype(np.float64))) >= 2.0 ** 62:
        raise ValueError(f"{len(index)} entrants are more than the fit can index")
    packed = np.zeros(len(keys), dtype=np.int64)
    for col, base in zip(keys.T, radix):
        packed = packed * base + col
    unique, kind_of, count = np.unique(packed, return_inverse=True, return_counts=True)
    kind_of = kind_of.reshape(-1)
    kinds = np.zeros((len(unique), keys.shape[1]), dtype=np.int64)
    for c in reversed(range(keys.shape[1])):
        kinds[:, c] = unique % radix[c]
        unique = unique // radix[c]
    k = len(kinds)
    rows = np.arange(k)
    if partnerships:
        cols = [kinds[:, 0], kinds[:, 1], kinds[:, 2], kinds[:, 3]]
        vals = [1.0, 1.0, -1.0, -1.0]
        if pairs is not None:
            n = len(index)
            codes = np.array([a * n + b for a, b in pairs], dtype=np.int64)
            order = np.argsort(codes)
            targets = np.array(list(pairs.values()), dtype=np.intp)[order]
            codes = codes[order]
            cols += [targets[np.searchsorted(codes, kinds[:, 0] * n + kinds[:, 1])],
                     targets[np.searchsorted(codes, kinds[:, 2] * n + kinds[:, 3])]]
            vals += [1.0, -1.0]
    else:
        cols, vals = [kinds[:, 0], kinds[:, 1]], [1.0, -1.0]
    # COO -> CSR sums repeated entries (a bot in both seats of a side counts twice; on both sides, zero).
    x = sp.csr_matrix((np.concatenate([np.full(k, v) for v in vals]), (np.tile(rows, len(cols)), np.concatenate(cols))),
                      shape=(k, width))
    x.sum_duplicates()
    x.eliminate_zeros()
    members = sp.csr_matrix((np.ones(len(kind_of)), (cluster, kind_of)), shape=(len(group_names), k))
    return Design(x, kinds[:, -1] / 2.0, np.full(k, noise), count.astype(np.float64), members, len(group_names))


class Gram:
    """Xᵀ diag(v) X for many ``v`` over one sparse X: the pattern is worked out once.

    Each row of X has at most six entries, so the product is a sum of small outer
    products; their positions in the result never change between Newton steps, only
    their weights, so each step is one ``bincount``.
    """

    def __init__(self, x: sp.csr_matrix, width: int, dense: bool) -> None:
        self.width, self.dense = width, dense
        lengths = np.diff(x.indptr)
        most = int(lengths.max()) if len(lengths) else 0
        k = x.shape[0]
        cols = np.full((k, most), -1, dtype=np.int64)
        vals = np.zeros((k, most))
        slot = np.arange(x.nnz) - np.repeat(x.indptr[:-1], lengths)
        rows = np.repeat(np.arange(k), lengths)
        cols[rows, slot] = x.indices
        vals[rows, slot] = x.data
        ii, jj = cols[:, :, None], cols[:, None, :]
        valid = (ii >= 0) & (jj >= 0)
        key = (ii * width + jj)[valid]
        self.row = np.broadcast_to(np.arange(k)[:, None, None], valid.shape)[valid]
        self.val = (vals[:, :, None] * vals[:, None, :])[valid]
        diagonal = np.arange(width, dtype=np.int64) * (width + 1)
        if dense:
            self.pos = key
        else:
            # Every diagonal entry exists (the prior), whether or not its parameter ever played.
            unique, inverse = np.unique(np.concatenate([key, diagonal]), return_inverse=True)
            self.pos = inverse.reshape(-1)[:len(key)]
            self.diag_pos = inverse.reshape(-1)[len(key):]
            self.indices = (unique % width).astype(np.int32)
            self.indptr = np.searchsorted(unique // width, np.arange(width + 1)).astype(np.int32)
            self.nnz = len(unique)

    def __call__(self, v: Vector, diagonal: Vector) -> Matrix | sp.csr_matrix:
        weights = v[self.row] * self.val
        if self.dense:
            h: Matrix = np.bincount(self.pos, weights, minlength=self.width * self.width).astype(np.float64)
            h = h.reshape(self.width, self.width)
            h[np.diag_indices_from(h)] += diagonal
            return h
        data: Vector = np.bincount(self.pos, weights, minlength=self.nnz).astype(np.float64)
        data[self.diag_pos] += diagonal
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.width, self.width))


def _terms(z: Vector, y: Vector) -> tuple[Vector, Vector]:
    """d/dz and -d²/dz² of y log Φ(z) + (1-y) log Φ(-z), elementwise."""
    dens = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    up = dens / np.maximum(0.5 * erfc(-z / math.sqrt(2)), 1e-300)
    down = dens / np.maximum(0.5 * erfc(z / math.sqrt(2)), 1e-300)
    win, lose = np.where(y > 0, y, 0.0), np.where(y < 1, 1 - y, 0.0)
    g = win * up - lose * down
    w = win * up * (up + z) + lose * down * (down - z)
    return g, w


#: Designs up to this many entries (kinds x parameters) are multiplied as dense arrays: a
#: four-bot event's fit is dominated by scipy.sparse's per-call overhead otherwise.
SMALL_DESIGN = 50_000


def _operator(x: sp.csr_matrix) -> Matrix | sp.csr_matrix:
    """``x`` as the faster thing to multiply by: dense when small, sparse otherwise."""
    return x.toarray() if x.shape[0] * x.shape[1] <= SMALL_DESIGN else x


def _dense(h: Matrix | sp.csr_matrix) -> Matrix:
    return h if isinstance(h, np.ndarray) else h.toarray()


def newton(d: Design, prior_var: Vector, iterations: int = 50, tol: float = 1e-9,
           dense: bool = True) -> tuple[Vector, Matrix | sp.csr_matrix]:
    """The MAP by Newton's method; returns (θ, the Hessian at the last step's start).

    ``dense`` factorises the Hessian (exact, for up to a few thousand parameters);
    otherwise each step is a preconditioned conjugate-gradient solve on the sparse
    Hessian, to a relative residual of 1e-12.
    """
    n = len(prior_var)
    theta = np.zeros(n)
    gram = Gram(d.x, n, dense)
    x = _operator(d.x)
    hess: Matrix | sp.csr_matrix = sp.diags(1.0 / prior_var, format="csr")
    for _ in range(iterations):
        z = (x @ theta) / d.s
        g, w = _terms(z, d.y)
        grad = x.T @ (d.count * g / d.s) - theta / prior_var
        hess = gram(d.count * w / (d.s * d.s), 1.0 / prior_var)
        if dense:
            step = cho_solve(cho_factor(_dense(hess), lower=True), grad)
        else:
            step = _cg(sp.csr_matrix(hess), grad)
        theta = theta + step
        if float(np.max(np.abs(step))) < tol:
            break
    return theta, hess


def _cg(a: sp.csr_matrix, b: Vector, rtol: float = 1e-13, limit: int = 5000) -> Vector:
    """Solve a x = b (``a`` sparse, symmetric positive definite) by Jacobi-preconditioned conjugate gradients."""
    out: Vector = _block_cg(a, b[:, None], rtol, limit)[:, 0]
    return out


def _robust(d: Design, theta: Vector, cov: Matrix) -> Matrix:
    """Sandwich: A⁻¹ (G/(G-1) Σ_c g_c g_cᵀ) A⁻¹ with one score vector per cluster (duplicate group)."""
    x = _operator(d.x)
    g, _ = _terms((x @ theta) / d.s, d.y)
    if isinstance(x, np.ndarray):
        scores = d.members @ (x * (g / d.s)[:, None])
        meat = scores.T @ scores
    else:
        sparse_scores = sp.csr_matrix(d.members @ sp.csr_matrix(x.multiply((g / d.s)[:, None])))
        meat = sp.csr_matrix(sparse_scores.T @ sparse_scores).toarray()
    scale = d.clusters / (d.clusters - 1) if d.clusters > 1 else 1.0
    out: Matrix = (cov @ meat @ cov) * scale
    return out


def fit_bots(results: Sequence[Result], partnerships: bool,
             names: Sequence[str]) -> tuple[list[float], tuple[tuple[float, ...], ...], tuple[tuple[float, ...], ...], int]:
    """(θ, model covariance, robust covariance, clusters) of the bots' model over ``names``."""
    index = {n: i for i, n in enumerate(names)}
    with one_thread():
        d = design(results, partnerships, index)
        theta, hess = newton(d, np.full(len(names), SIGMA0 ** 2))
        cov = cho_solve(cho_factor(_dense(hess), lower=True), np.eye(len(names)))
        robust = _robust(d, theta, cov)
    return theta.tolist(), _freeze(cov), _freeze(robust), d.clusters


def fit_partnerships(results: Sequence[Result], index: dict[str, int],
                     members: Sequence[tuple[int, int]]) -> tuple[list[float], list[float]]:
    """(estimate, variance) of θ_a + θ_b + θ_p for every partnership p = (a, b), in ``members`` order."""
    n, m = len(index), len(members)
    pairs = {ab: n + i for i, ab in enumerate(members)}
    prior = np.concatenate([np.full(n, SIGMA0 ** 2), np.full(m, PAIR_SIGMA ** 2)])
    dense = n + m <= DENSE_PARAMETERS
    # w_p: +1 on each member bot (twice for a bot partnered with itself) and +1 on the partnership.
    first = np.array([a for a, _ in members], dtype=np.intp)
    second = np.array([b for _, b in members], dtype=np.intp)
    own = np.arange(n, n + m)
    with one_thread():
        d = design(results, True, index, pairs)
        theta, hess = newton(d, prior, dense=dense)
        est = theta[first] + theta[second] + theta[own]
        if dense:
            cov = cho_solve(cho_factor(_dense(hess), lower=True), np.eye(n + m))
            var = (cov[first, first] + cov[second, second] + cov[own, own]
                   + 2 * (cov[first, second] + cov[first, own] + cov[second, own]))
        else:
            var = pair_variances(sp.csr_matrix(hess), n, first, second)
    return est.tolist(), var.tolist()


_threads: ThreadpoolController | None = None


def one_thread() -> Any:
    """A context in which BLAS runs on one thread (see the module docstring)."""
    global _threads
    if _threads is None:
        _threads = ThreadpoolController()
    return _threads.limit(limits=1, user_api="blas")


def pair_variances(hess: sp.csr_matrix, n: int, first: npt.NDArray[np.intp],
                    second: npt.NDArray[np.intp]) -> Vector:
    """Var(θ_a + θ_b + θ_p) for every partnership p = a+b, without the dense inverse.

    With H = [[A, C], [Cᵀ, D]] (bots first), u_p the bots' part of w_p and
    Y = D⁻¹ Cᵀ, S = A − C Y (the bots' Schur complement, n × n):

        wᵀ H⁻¹ w = (u_p − Y_p)ᵀ S⁻¹ (u_p − Y_p) + (D⁻¹)_pp

    Y is n solves with the sparse D (block conjugate gradients), S is dense and
    small. (D⁻¹)_pp is the one approximation: D = Δ − O (its diagonal minus the
    meetings between partnerships), so with M = Δ^-½ O Δ^-½,
    (D⁻¹)_pp = Σ_k (M^k)_pp / Δ_pp, summed to k = 4 (diag M = 0; M², M³, M⁴ from
    M and M² alone). Partnerships meet few others, each a few times, so the
    neglected terms are small (measured against the dense answer in the tests).
    """
    h = hess
    a = h[:n, :n].toarray()
    c = h[:n, n:].tocsr()
    dmat = h[n:, n:].tocsr()
    y = _block_cg(dmat, c.T.toarray())
    s = a - c @ y
    factor = cho_factor(s, lower=True)
    m = dmat.shape[0]
    u = np.zeros((m, n))
    rows = np.arange(m)
    np.add.at(u, (rows, first), 1.0)
    np.add.at(u, (rows, second), 1.0)
    r = u - y
    bots_part = np.einsum("ij,ij->i", r, cho_solve(factor, r.T).T)
    delta = dmat.diagonal()
    scale = sp.diags(1.0 / np.sqrt(delta))
    off = dmat - sp.diags(delta)
    mm = (scale @ (-off) @ scale).tocsr()
    m2 = (mm @ mm).tocsr()
    series = (1.0 + np.asarray(mm.multiply(mm).sum(axis=1)).ravel()
              + np.asarray(m2.multiply(mm).sum(axis=1)).ravel()
              + np.asarray(m2.multiply(m2).sum(axis=1)).ravel())
    out: Vector = bots_part + series / delta
    return out


def _block_cg(a: sp.csr_matrix, b: Matrix, rtol: float = 1e-9, limit: int = 5000) -> Matrix:
    """Solve a X = B for every column of B at once (Jacobi-preconditioned CG per column, run in lockstep).

    Stops when every column's residual is below ``rtol`` times its right-hand side.
    """
    inv_diag = (1.0 / a.diagonal())[:, None]
    x = np.zeros_like(b)
    r = b.copy()
    z = inv_diag * r
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    stop = rtol * rtol * np.maximum(np.einsum("ij,ij->j", b, b), 1e-300)
    for _ in range(limit):
        if not (np.einsum("ij,ij->j", r, r) > stop).any():
            break
        ap = a @ p
        pap = np.einsum("ij,ij->j", p, ap)
        alpha = rz / np.where(pap > 0, pap, 1.0)
        x += alpha * p
        r -= alpha * ap
        np.multiply(inv_diag, r, out=z)
        rz_new = np.einsum("ij,ij->j", r, z)
        p *= rz_new / np.where(rz > 0, rz, 1.0)
        p += z
        rz = rz_new
    return x


def _freeze(m: Matrix) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in m.tolist())
