"""The torch-only Dynamic Coattention module: shapes, masking, decoding."""

import itertools

import pytest
import torch

from spacy_attn.models.coattention import DynamicCoattention, span_logits, top_spans

QL = torch.tensor([5, 2, 0, 3])
DL = torch.tensor([9, 4, 7, 0])


def _inputs(seed=0, n=5, m=9, nI=6):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(4, n, nI, generator=g),
        QL.clone(),
        torch.randn(4, m, nI, generator=g),
        DL.clone(),
    )


def _model(max_iterations=4, seed=0, **kw):
    torch.manual_seed(seed)
    return DynamicCoattention(
        6, 8, pool_size=3, max_iterations=max_iterations, dropout=0.0, **kw
    )


def test_shapes_train_and_eval():
    model = _model()
    Q, ql, D, dl = _inputs()
    start, end, iterations = model.train()(Q, ql, D, dl)
    assert start.shape == end.shape == (4, 4, 9)
    assert iterations.tolist() == [4, 4, 4, 4]
    start, end, iterations = model.eval()(Q, ql, D, dl)
    assert start.shape == end.shape == (4, 1, 9)
    assert ((iterations >= 1) & (iterations <= 4)).all()
    # Padded context positions get the mask logit; real ones are finite.
    assert (start[1, 0, 4:] == -1e4).all() and (end[3, 0] == -1e4).all()
    assert torch.isfinite(start[0, 0]).all() and (start[0, 0] > -1e3).all()


def test_garbage_in_padding_changes_nothing():
    model = _model().eval()
    Q, ql, D, dl = _inputs()
    start, end, it = model(Q, ql, D, dl)
    Q2, D2 = Q.clone(), D.clone()
    for i in range(4):
        Q2[i, ql[i] :] = 1000.0
        D2[i, dl[i] :] = -1000.0
    start2, end2, it2 = model(Q2, ql, D2, dl)
    assert (
        torch.equal(start2, start) and torch.equal(end2, end) and torch.equal(it2, it)
    )
    # Extra padding columns change nothing either (up to float rounding).
    Q3 = torch.cat([Q, torch.randn(4, 4, 6)], dim=1)
    D3 = torch.cat([D, torch.randn(4, 6, 6)], dim=1)
    start3, end3, _ = model(Q3, ql, D3, dl)
    assert torch.allclose(start3[:, :, :9], start, atol=1e-5)
    assert (start3[:, :, 9:] == -1e4).all()


def test_gradients_reach_real_inputs_only():
    model = _model().train()
    Q, ql, D, dl = _inputs()
    Q.requires_grad_(True)
    D.requires_grad_(True)
    start, end, _ = model(Q, ql, D, dl)
    # A loss on real positions only, as the component's is.
    mask = torch.arange(9).unsqueeze(0) < dl.unsqueeze(1)
    (start[:, -1][mask].sum() + end[:, 0][mask].sum()).backward()
    for i in range(4):
        assert (Q.grad[i, ql[i] :] == 0).all() and (D.grad[i, dl[i] :] == 0).all()
    assert Q.grad[0, :5].abs().sum() > 0 and D.grad[0, :9].abs().sum() > 0


def test_batch_equals_single():
    """Each row stops on its own, so a row's result never depends on its batch."""
    model = _model().eval()
    Q, ql, D, dl = _inputs(seed=3)
    start, end, iterations = model(Q, ql, D, dl)
    for i in range(4):
        s1, e1, it1 = model(Q[i : i + 1], ql[i : i + 1], D[i : i + 1], dl[i : i + 1])
        assert it1.item() == iterations[i].item()
        assert torch.allclose(s1[0], start[i], atol=1e-5) and torch.allclose(
            e1[0], end[i], atol=1e-5
        )


def test_iteration_stopping_rule():
    """Inference stops a row at the first iteration whose (start, end)
    argmax equals the previous estimate (initially (0, length - 1)), and
    returns that iteration's logits; training always runs every iteration."""
    stops = set()
    for seed in range(6):
        model = _model(max_iterations=4, seed=seed)
        Q, ql, D, dl = _inputs(seed=seed)
        all_s, all_e, _ = model.train()(Q, ql, D, dl)  # dropout 0: same numbers
        final_s, final_e, iterations = model.eval()(Q, ql, D, dl)
        for i in range(4):
            if dl[i] == 0:
                continue
            prev = (0, dl[i].item() - 1)
            expected = 4
            for t in range(4):
                cur = (all_s[i, t].argmax().item(), all_e[i, t].argmax().item())
                if cur == prev:
                    expected = t + 1
                    break
                prev = cur
            assert iterations[i].item() == expected
            stops.add(expected)
            assert torch.allclose(final_s[i, 0], all_s[i, expected - 1], atol=1e-5)
            assert torch.allclose(final_e[i, 0], all_e[i, expected - 1], atol=1e-5)
    assert len(stops) > 1  # the rule was exercised, not always max_iterations


def test_lazy_input_projection():
    torch.manual_seed(0)
    model = DynamicCoattention(
        None, 8, pool_size=2, max_iterations=2, dropout=0.0
    ).eval()
    Q, ql, D, dl = _inputs(nI=11)
    start, _, _ = model(Q, ql, D, dl)
    assert start.shape == (4, 1, 9)
    assert model.project.weight.shape == (8, 11)


def test_paper_parameter_count():
    """l = 200, p = 16, 300-d GloVe (the paper's setting): every weight
    matrix of sections 2.1-2.3, counted by hand."""
    l, p, nI = 200, 16, 300
    lstm = lambda i, h: 4 * h * (i + h) + 8 * h  # noqa: E731  (torch keeps two bias vectors)
    hmn = 5 * l * l + (3 * l * p * l + p * l) + (l * p * l + p * l) + (2 * l * p + p)
    expected = (
        lstm(nI, l)  # shared encoder
        + 2 * l  # sentinels
        + l * l
        + l  # question projection
        + 2 * lstm(3 * l, l)  # fusion BiLSTM
        + lstm(4 * l, l)  # decoder LSTM cell
        + 2 * hmn
    )
    model = DynamicCoattention(nI, l, pool_size=p, max_iterations=4)
    assert sum(t.numel() for t in model.parameters()) == expected


def test_top_spans_brute_force():
    g = torch.Generator().manual_seed(1)
    start = torch.randn(3, 8, generator=g) * 3
    end = torch.randn(3, 8, generator=g) * 3
    lengths = torch.tensor([8, 3, 0])
    starts, ends, scores = top_spans(start, end, lengths, max_answer_length=4, top_k=50)
    for b in range(3):
        L = lengths[b].item()
        ps = torch.softmax(start[b, :L], 0) if L else torch.zeros(0)
        pe = torch.softmax(end[b, :L], 0) if L else torch.zeros(0)
        valid = {
            (i, j): (ps[i] * pe[j]).item()
            for i, j in itertools.product(range(L), range(L))
            if i <= j < i + 4
        }
        total = sum(valid.values())
        got = [(s.item(), e.item()) for s, e in zip(starts[b], ends[b]) if s >= 0]
        assert sorted(got) == sorted(valid)  # every valid span, nothing else
        for (s, e), score in zip(got, scores[b].tolist()):
            assert s <= e < s + 4 and e < L  # end >= start, max length, inside
            assert score == pytest.approx(valid[(s, e)] / total, rel=1e-4)
        assert scores[b].tolist() == sorted(scores[b].tolist(), reverse=True)
        if L:
            assert sum(scores[b].tolist()) == pytest.approx(1.0, abs=1e-5)
    assert (starts[2] == -1).all() and (scores[2] == 0).all()


def test_top_spans_grouped_rows_share_one_normalization():
    """Windows of one context (same group) are normalized jointly: scores
    are exp(start + end) over the sum across all the group's valid spans."""
    g = torch.Generator().manual_seed(2)
    start = torch.randn(3, 6, generator=g)
    end = torch.randn(3, 6, generator=g)
    lengths = torch.tensor([6, 4, 5])
    group = torch.tensor([0, 0, 1])
    _, _, scores = top_spans(
        start, end, lengths, max_answer_length=3, top_k=100, group=group
    )
    _, _, alone = top_spans(start, end, lengths, max_answer_length=3, top_k=100)
    assert sum(scores[:2].flatten().tolist()) == pytest.approx(1.0, abs=1e-5)
    assert sum(scores[2].tolist()) == pytest.approx(1.0, abs=1e-5)
    assert torch.allclose(scores[2], alone[2])
    total = sum(
        torch.exp(start[b, i] + end[b, j]).item()
        for b in (0, 1)
        for i in range(lengths[b])
        for j in range(i, min(i + 3, lengths[b]))
    )
    best = torch.exp(
        span_logits(start[:2], end[:2], lengths[:2], max_answer_length=3).max()
    ).item()
    assert scores[:2].max().item() == pytest.approx(best / total, rel=1e-4)


def test_span_logits_band():
    band = span_logits(
        torch.zeros(1, 5),
        torch.arange(5.0).unsqueeze(0),
        torch.tensor([5]),
        max_answer_length=2,
    )
    assert band.shape == (1, 5, 2)
    assert band[0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert band[0, :4, 1].tolist() == [1.0, 2.0, 3.0, 4.0] and band[0, 4, 1] == float(
        "-inf"
    )
    with pytest.raises(ValueError, match="max_answer_length"):
        span_logits(
            torch.zeros(1, 5), torch.zeros(1, 5), torch.tensor([5]), max_answer_length=0
        )


def test_top_spans_known_group_count_equals_inferred():
    """n_groups (known to the caller: no device sync) gives what reading it
    from the group ids gives; empty rows and groups are fine."""
    g = torch.Generator().manual_seed(3)
    start, end = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g)
    lengths, group = torch.tensor([6, 0, 4, 5]), torch.tensor([0, 0, 1, 1])
    inferred = top_spans(start, end, lengths, max_answer_length=3, top_k=7, group=group)
    known = top_spans(
        start, end, lengths, max_answer_length=3, top_k=7, group=group, n_groups=2
    )
    for a, b in zip(inferred, known):
        assert torch.equal(a, b)
    # A group id beyond the last used one (a doc without windows) is harmless.
    more = top_spans(
        start, end, lengths, max_answer_length=3, top_k=7, group=group, n_groups=5
    )
    assert torch.equal(more[2], known[2])


def test_cuda_lstm_path_gives_the_same_logits(monkeypatch):
    """The whole module with its LSTMs run as on CUDA (packed, cuDNN-style;
    here on CPU) equals the CPU (padded) path, forward and backward."""
    import spacy_attn.models.coattention as coattention
    from spacy_attn.models.rnn import run_lstm_packed

    model = _model().double().train()
    Q, ql, D, dl = _inputs(seed=4)
    Q, D = Q.double().requires_grad_(True), D.double().requires_grad_(True)
    padded = model(Q, ql, D, dl)
    grads_padded = torch.autograd.grad(
        padded[0].sum() + padded[1][:, -1].sum(), [Q, D, *model.parameters()]
    )
    monkeypatch.setattr(coattention, "run_lstm", run_lstm_packed)
    packed = model(Q, ql, D, dl)
    grads_packed = torch.autograd.grad(
        packed[0].sum() + packed[1][:, -1].sum(), [Q, D, *model.parameters()]
    )
    for a, b in zip(packed, padded):
        torch.testing.assert_close(a, b)
    for a, b in zip(grads_packed, grads_padded):
        torch.testing.assert_close(a, b)


class _HostReads(torch.overrides.TorchFunctionMode):
    """Records the calls that make a CUDA host wait for the GPU: indexing
    with a bool tensor (it needs the count of True values on the host) and
    blocking copies to the CPU."""

    def __init__(self):
        super().__init__()
        self.bool_indexing, self.to_host = 0, 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("__getitem__", "__setitem__"):
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            self.bool_indexing += any(
                isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in index
            )
        elif name == "cpu" or (
            name == "to"
            and not kwargs.get("non_blocking")
            and any(str(a) == "cpu" for a in (*args[1:], kwargs.get("device")))
        ):
            self.to_host += 1
        return func(*args, **kwargs)


@pytest.mark.parametrize("no_answer", [False, True])
def test_training_step_reads_the_device_once(monkeypatch, no_answer):
    """A training forward pass, with the LSTMs on their CUDA path, copies
    the lengths to the host once and indexes by positions, never by a bool
    mask: on a GPU each of those would wait for the device. (The backward
    pass runs in C++, out of the counter's sight; it still has to run.)"""
    import spacy_attn.models.coattention as coattention
    from spacy_attn.models.rnn import run_lstm_packed

    monkeypatch.setattr(coattention, "run_lstm", run_lstm_packed)
    model = _model(no_answer=no_answer).train()
    Q, ql, D, dl = _inputs(seed=2)
    reads = _HostReads()
    with reads:
        start, end, _ = model(Q, ql, D, dl)
        (start.sum() + end.sum()).backward()
    assert (reads.bool_indexing, reads.to_host) == (0, 1)
    # The counter sees what it must: the old way of packing the HMN rows.
    with reads:
        start[torch.ones_like(start, dtype=torch.bool)].sum().item()
        ql.cpu()
    assert (reads.bool_indexing, reads.to_host) == (1, 2)


def test_hmn_computes_the_paper_equations():
    """HighwayMaxout's split of W1 (precompute, then each question's row
    selected for its tokens and added in place) gives the paper's eq. 9-12
    written out with one W1 over [u_t; r]: the same scores and gradients."""
    from spacy_attn.models.coattention import HighwayMaxout

    torch.manual_seed(0)
    l, p = 4, 3
    hmn = HighwayMaxout(l, p, dropout=0.0)
    # Two questions of 3 and 2 context tokens, packed.
    example = torch.tensor([0, 0, 0, 1, 1])
    u = torch.randn(5, 2 * l, requires_grad=True)
    h, u_s, u_e = (torch.randn(2, w, requires_grad=True) for w in (l, 2 * l, 2 * l))

    def maxout(X):
        return X.view(X.shape[0], l, p).max(dim=-1).values

    def paper(u, h, u_s, u_e):
        r = torch.tanh(hmn.W_D(torch.cat([h, u_s, u_e], dim=-1)))[example]
        W1 = torch.cat([hmn.W1_u.weight, hmn.W1_r.weight], dim=1)
        m1 = maxout(torch.cat([u, r], dim=-1) @ W1.T + hmn.W1_u.bias)
        m2 = maxout(hmn.W2(m1))
        return hmn.W3(torch.cat([m1, m2], dim=-1)).max(dim=-1).values

    got = hmn(hmn.precompute(u), example, h, u_s, u_e)
    want = paper(u, h, u_s, u_e)
    torch.testing.assert_close(got, want)
    weights = torch.randn(5)
    inputs = [u, h, u_s, u_e, *hmn.parameters()]
    got_grads = torch.autograd.grad((got * weights).sum(), inputs)
    want_grads = torch.autograd.grad((want * weights).sum(), inputs)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w)
