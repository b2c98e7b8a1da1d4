"""The problems of the synthetic suite: which family, which columns, which design, which noise.

Column names and scales vary on purpose, so that nothing in the search can key on them.
Constants are drawn from each problem's own seeded stream; this list fixes everything else.
Problem names are ``<family>_<nn>``.
"""
from __future__ import annotations

from tasks.synthetic.additive import chinchilla_additive, drifting_exponent, kaplan_pow_sum
from tasks.synthetic.distillation import distillation
from tasks.synthetic.effective import effective_size
from tasks.synthetic.knobs import hyper_bowl, moe, vocab_bowl
from tasks.synthetic.multi import mixture, multi_target
from tasks.synthetic.record import Noise
from tasks.synthetic.repetition import data_repetition
from tasks.synthetic.single import broken_power, power_offset, saturating

QUIET = Noise(0.003)
TYPICAL = Noise(0.006, seed_sigma=0.004)
NOISY = Noise(0.015, seed_sigma=0.005, outliers=3)
SCHEDULE = Noise(0.004, seed_sigma=0.005, bump=0.015)  # checkpoints of runs with a cut-off schedule
ACCURACY = Noise(0.012)
POWERS_OF_TWO = (32, 64, 128, 256, 512, 1024, 2048)


def _teacher_size(frame):
    """The size a teacher of this loss has under L = 1.7 + 0.9*(N/1e9)**-0.3, to 3 significant digits."""
    size = 1e9 * ((frame.teacher_loss - 1.7) / 0.9) ** (-1 / 0.3)
    return [float(f"{v:.3g}") for v in size]


ENTRIES = [
    # chinchilla_additive: the grid, IsoFLOP and checkpoint designs, groups, one large table
    (chinchilla_additive, dict(design="grid", n_range=(1e7, 1e10), n_levels=6, d_levels=6, noise=TYPICAL)),
    (chinchilla_additive, dict(names=dict(N="N", D="D", y="L"), design="isoflop", n_range=(3e6, 3e9),
                               n_levels=9, per_run=9, noise=QUIET)),
    (chinchilla_additive, dict(names=dict(N="n_params", D="n_tokens", y="val_loss"), design="checkpoints",
                               n_range=(1e5, 1e8), n_levels=7, per_run=10, noise=SCHEDULE)),
    (chinchilla_additive, dict(names=dict(N="model_size", D="data", y="eval_loss", group="dataset"),
                               design="grid", n_range=(1e8, 1e11), n_levels=5, d_levels=5,
                               groups=("web", "code", "books"), noise=NOISY)),
    (chinchilla_additive, dict(names=dict(N="non_embedding_params", D="train_tokens"), design="checkpoints",
                               n_range=(1e6, 1e9), n_levels=12, per_run=100, test_levels=2, noise=SCHEDULE)),
    # kaplan_pow_sum: the original small-exponent form and the modern one over a floor
    (kaplan_pow_sum, dict(design="grid", n_range=(1e6, 1e9), n_levels=5, d_levels=6, noise=QUIET)),
    (kaplan_pow_sum, dict(names=dict(N="N", D="D"), design="checkpoints", n_range=(1e5, 1e8), n_levels=6,
                          per_run=12, noise=SCHEDULE)),
    (kaplan_pow_sum, dict(names=dict(N="num_params", y="test_loss"), design="isoflop", n_range=(1e7, 1e10),
                          n_levels=8, per_run=7, offset=True, noise=TYPICAL)),
    (kaplan_pow_sum, dict(names=dict(D="data", group="language"), design="grid", n_range=(3e7, 3e10),
                          n_levels=5, d_levels=5, offset=True, groups=("en", "de"), noise=TYPICAL)),
    # power_offset: one input; model size, compute in FLOPs, fine-tuning data (shifted), width
    (power_offset, dict(role="N", x_range=(1e5, 1e8), n_levels=13, seeds=2, noise=TYPICAL)),
    (power_offset, dict(names=dict(C="compute", group="arch"), role="C", x_range=(1e17, 1e22), n_levels=16,
                        seeds=2, groups=("transformer", "hybrid"), noise=NOISY)),
    (power_offset, dict(names=dict(D="finetune_tokens", y="sft_loss", group="task"), role="D",
                        x_range=(2e5, 2e8), n_levels=13, shifted=True, seeds=1,
                        groups=("task_a", "task_b", "task_c", "task_d"), noise=TYPICAL)),
    (power_offset, dict(names=dict(width="width"), role="width", x_range=(64, 16384), n_levels=13, seeds=2,
                        noise=NOISY)),
    # drifting_exponent: the data exponent moves with N
    (drifting_exponent, dict(design="grid", n_range=(1e7, 1e10), n_levels=6, d_levels=7, noise=TYPICAL)),
    (drifting_exponent, dict(names=dict(N="N", D="D"), design="grid", n_range=(1e5, 1e8), n_levels=5,
                             d_levels=8, noise=QUIET)),
    (drifting_exponent, dict(names=dict(N="model_size", D="data_size", y="val_loss"), design="checkpoints",
                             n_range=(3e6, 3e9), n_levels=7, per_run=12, noise=SCHEDULE)),
    (drifting_exponent, dict(names=dict(N="n_params", D="n_tokens", group="corpus"), design="isoflop",
                             n_range=(1e7, 1e10), n_levels=8, per_run=7, groups=("a", "b"), noise=TYPICAL)),
    # broken_power: a bend inside the training range
    (broken_power, dict(role="C", x_range=(1e17, 1e23), n_points=30, noise=TYPICAL)),
    (broken_power, dict(role="N", x_range=(1e5, 1e10), n_points=20, seeds=2, noise=QUIET)),
    (broken_power, dict(names=dict(y="val_loss", group="model"), role="D", x_range=(1e7, 1e12), n_points=25,
                        groups=("small", "large"), noise=NOISY)),
    (broken_power, dict(names=dict(C="C", y="L"), role="C", x_range=(1e18, 1e24), n_points=24, seeds=2,
                        noise=TYPICAL)),
    # data_repetition: epochs over a fixed pool of unique tokens
    (data_repetition, dict(n_range=(1e7, 1e9), n_levels=4, u_range=(1e8, 1e10), u_levels=3, axis="D",
                           test_levels=2, noise=TYPICAL)),
    (data_repetition, dict(names=dict(N="N", D="D", U="U"), n_range=(1e8, 1e10), n_levels=5,
                           u_range=(1e9, 1e11), epochs=(1, 2, 4, 8, 16, 32), axis="N", noise=QUIET)),
    (data_repetition, dict(names=dict(N="model_size", U="unique_data", y="val_loss"), use_epochs=True,
                           n_range=(3e6, 3e8), n_levels=3, u_range=(1e8, 1e9), u_levels=2,
                           epochs=(0.5, 1, 2, 4, 8, 16, 32, 64, 128), axis="D", test_levels=2, noise=NOISY)),
    (data_repetition, dict(names=dict(N="n_params", D="train_tokens", group="domain"), n_range=(1e7, 3e9),
                           n_levels=4, u_range=(1e9, 1e10), u_levels=2, epochs=(1, 2, 4, 8, 16, 32), axis="N",
                           groups=("code", "text"), noise=TYPICAL)),
    # ... with the epochs recorded beside the tokens they are made of: four inputs, one redundant
    (data_repetition, dict(names=dict(N="model_params", D="seen_tokens", U="unique_tokens"), n_range=(3e7, 3e9),
                           n_levels=4, u_range=(1e9, 1e10), u_levels=3, epochs=(1, 2, 4, 8, 16), axis="N",
                           noise=TYPICAL, recorded=("epochs", lambda f: f.seen_tokens / f.unique_tokens,
                                                    "seen over unique tokens"))),
    # saturating: accuracy-like targets
    (saturating, dict(names=dict(group="benchmark"), kind="logistic", role="C", x_range=(1e18, 1e24),
                      n_levels=19, groups=("task_1", "task_2", "task_3"), noise=Noise(0.015))),
    (saturating, dict(names=dict(y="score"), kind="decay", role="D", x_range=(1e8, 1e12), n_levels=13, seeds=2,
                      noise=ACCURACY)),
    (saturating, dict(names=dict(y="acc"), kind="logistic", role="N", x_range=(1e6, 1e11), n_levels=17,
                      seeds=2, noise=Noise(0.02, outliers=2))),
    (saturating, dict(names=dict(C="compute", y="win_rate", group="eval_set"), kind="decay", role="C",
                      x_range=(1e19, 1e24), n_levels=16, groups=("g1", "g2"), noise=ACCURACY)),
    # hyper_bowl: learning-rate and batch-size bowls whose optimum drifts with scale
    (hyper_bowl, dict(scale="N", scale_range=(1e7, 1e9), scale_levels=5, knobs=("lr",), lr_values=7,
                      noise=TYPICAL)),
    (hyper_bowl, dict(scale="D", scale_range=(1e9, 1e11), scale_levels=5, knobs=("bsz",),
                      bsz_values=POWERS_OF_TWO, noise=QUIET)),
    (hyper_bowl, dict(names=dict(N="n_params", lr="learning_rate", bsz="bsz", y="val_loss"), scale="N",
                      scale_range=(1e6, 1e8), scale_levels=5, knobs=("lr", "bsz"), lr_values=10,
                      bsz_values=(64, 128, 256, 512, 1024, 2048), seeds=4, noise=TYPICAL)),
    (hyper_bowl, dict(names=dict(N="model_size", lr="peak_lr", group="optimizer"), scale="N",
                      scale_range=(3e7, 3e9), scale_levels=4, knobs=("lr",), lr_range=(3e-4, 3e-2), lr_values=8,
                      groups=("adamw", "lion"), noise=NOISY)),
    # vocab_bowl: an additive bowl in a size input whose optimum grows with N
    (vocab_bowl, dict(n_range=(1e7, 1e9), n_levels=5, noise=TYPICAL)),
    (vocab_bowl, dict(names=dict(N="non_vocab_params", V="vocab_size"), n_range=(3e7, 3e9), n_levels=5,
                      with_data=True, noise=TYPICAL)),
    (vocab_bowl, dict(names=dict(depth="n_layers", y="val_loss"), bowl="depth", n_range=(1e6, 1e8), n_levels=5,
                      bowl_values=(4, 8, 12, 16, 24, 32, 48, 64), noise=QUIET)),
    # moe: experts whose benefit shrinks with size
    (moe, dict(n_range=(1e7, 1e9), n_levels=5, noise=TYPICAL)),
    (moe, dict(names=dict(N="dense_params", E="E"), kind="log_linear", n_range=(1e6, 1e9), n_levels=6,
               experts=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), noise=QUIET)),
    (moe, dict(names=dict(N="active_params", E="num_experts", y="val_loss"), kind="with_data",
               n_range=(3e7, 3e9), n_levels=5, experts=(1, 4, 16, 64), noise=TYPICAL)),
    (moe, dict(names=dict(N="N", E="n_experts", group="routing"), n_range=(1e7, 1e10), n_levels=4,
               experts=(1, 2, 4, 8, 16, 32), groups=("top1", "top2"), noise=NOISY)),
    # mixture: domain proportions, no scale axis
    (mixture, dict(kind="single", settings=30, noise=TYPICAL)),
    (mixture, dict(names=dict(ya="loss_web", yb="loss_code"), parts=("p_web", "p_code", "p_books"),
                   kind="two_domains", settings=40, noise=QUIET)),
    (mixture, dict(parts=("w_en", "w_de", "w_fr"), kind="own_share", settings=36, seeds=2, noise=TYPICAL)),
    (mixture, dict(names=dict(group="model"), parts=("prop_a", "prop_b", "prop_c"), kind="single", settings=24,
                   groups=("s", "m", "l"), noise=Noise(0.01, outliers=2))),
    # multi_target: two targets of the same runs
    (multi_target, dict(kind="loss_acc", design="grid", n_range=(1e7, 1e10), n_levels=6, d_levels=6,
                        noise=TYPICAL)),
    (multi_target, dict(names=dict(N="N", D="D", ya="loss_code", yb="loss_text"), kind="two_domains",
                        design="isoflop", n_range=(1e6, 1e9), n_levels=8, per_run=7, noise=QUIET)),
    (multi_target, dict(kind="loss_acc_compute", x_range=(1e18, 1e23), noise=TYPICAL)),
    (multi_target, dict(names=dict(N="n_params", D="n_tokens", y="val_loss", y2="val_acc", group="variant"),
                        kind="loss_acc", design="checkpoints", n_range=(1e6, 1e9), n_levels=7, per_run=8,
                        groups=("base", "long_ctx"), noise=SCHEDULE)),
    # effective_size: an input that is no size (sparsity; bits, which span over 4x) sets what a parameter is worth
    (effective_size, dict(modifier="sparsity", n_range=(1e7, 1e10), n_levels=6, d_levels=4, noise=TYPICAL)),
    (effective_size, dict(names=dict(N="N", D="D", s="bits", y="L"), modifier="precision", n_range=(3e6, 3e9),
                          n_levels=5, d_levels=4, noise=QUIET)),
    (effective_size, dict(names=dict(N="model_size", s="pruned_fraction", group="corpus"), modifier="sparsity",
                          n_range=(1e8, 1e11), n_levels=5, d_levels=3, values=(0.0, 0.5, 0.8),
                          groups=("web", "code"), noise=NOISY)),
    (effective_size, dict(names=dict(N="n_params", D="n_tokens", s="weight_bits", y="val_loss"),
                          modifier="precision", n_range=(1e6, 1e9), n_levels=7, d_levels=3,
                          values=(4.0, 6.0, 8.0, 12.0, 16.0), noise=TYPICAL)),
    # ... a sparse sweep that records the active parameters beside the total and the sparsity
    (effective_size, dict(names=dict(N="total_params", D="train_tokens", s="sparsity"), modifier="sparsity",
                          n_range=(3e7, 3e10), n_levels=6, d_levels=3, noise=TYPICAL,
                          recorded=("active_params", lambda f: f.total_params * (1 - f.sparsity),
                                    "total params times the share kept"))),
    # distillation: the teacher's loss, an input, is the floor the student's loss falls towards
    (distillation, dict(n_range=(1e8, 1e10), n_levels=5, d_levels=4, noise=TYPICAL)),
    (distillation, dict(names=dict(N="n", D="tokens", s="teacher_ce", y="ce", group="domain"), n_range=(3e7, 3e9),
                        n_levels=6, d_levels=3, teachers=(2.0, 2.3, 2.7), groups=("web", "code"), noise=NOISY)),
    (distillation, dict(names=dict(N="params", D="data", s="teacher_loss", y="loss"), n_range=(1e7, 1e9),
                        n_levels=4, d_levels=5, teachers=(2.4, 2.6, 2.9, 3.2, 3.5), noise=QUIET)),
    # ... with each teacher's size recorded beside its loss (the size a teacher law of its own gives)
    (distillation, dict(n_range=(5e7, 5e9), n_levels=5, d_levels=4, teachers=(2.3, 2.6, 2.9, 3.3),
                        noise=TYPICAL, recorded=("teacher_params", _teacher_size, "from a teacher's own law"))),
]


def entries() -> list[tuple[str, object, dict]]:
    """(name, builder, options) for every problem, numbered within its family."""
    counts: dict[str, int] = {}
    out = []
    for builder, options in ENTRIES:
        family = builder.__name__
        counts[family] = counts.get(family, 0) + 1
        out.append((f"{family}_{counts[family]:02d}", builder, options))
    return out
