"""The encoder–decoder Transformer (Vaswani et al. 2017) checkpoints as model cards."""

from __future__ import annotations

from engine import checkpoints, gate
from engine.errors import InputError
from engine.messages import Message
from engine.models.card import Alignment, Limits, forced_tokens
from engine.models.cards.nmt import TranslationCard, _alignment

PE_TITLES = {pe: Message(f"card.pe.{pe}") for pe in ("sinusoidal", "learned", "none")}


class TransformerCard(TranslationCard):
    family = "transformer"
    runtime_module = "engine.models.transformer"
    paper = "Vaswani et al. 2017"
    swappable = True  # a variant replaces every encoder self-attention core
    aligns = True  # every cross-attention head is a target × source alignment
    default_variant = "sinusoidal"  # the paper's positional encoding

    @property
    def variant(self) -> str:
        return self.meta["config"]["pe"]

    @property
    def title(self) -> str:
        c = self.meta["config"]
        size = Message("card.transformer.size", layers=c["n_layers"], heads=c["n_heads"])
        pe = PE_TITLES.get(self.variant, self.variant)
        return Message("card.transformer.title", pe=pe, size=size, direction=self.direction)

    @property
    def limits(self) -> Limits:
        unit = Message("unit.characters" if self.task == "dates" else "unit.words_and_marks")
        return Limits(
            max_chars=self.runtime.MAX_CHARS,
            max_tokens=self.meta["config"]["max_len"],
            token_unit=unit,
            empty=Message("text.empty"),
        )

    @property
    def max_new(self) -> int:
        """The most target tokens a translation writes (the runtime's ``Transformer.max_new``)."""
        return min(self.meta["max_tgt"], self.meta["config"]["max_len"] - 1)

    @property
    def evaluate_command(self) -> str:
        return (
            f"python -m engine.evaluate transformer --task {self.task} --pe {self.variant} --save"
        )

    @property
    def result_name(self) -> str:
        return checkpoints.result_name("transformer", self.task)

    def results(self) -> dict | None:
        """The evaluated PE in full, the others as the file's ``pe_ablation``."""
        saved = self.saved_results()
        if saved is None:
            return None
        if saved.get("checkpoint") == self.name:
            return saved
        return saved.get("pe_ablation", {}).get(self.variant)

    def load(self):
        return self.runtime.load(self.name, self.directory)

    def _trace(self, model, input, **swap):
        return self.runtime.trace(model, input, **swap)

    def attention_inputs(self, input, *, model=None, layer: int = 0, head: int | None = None):
        """The encoder's ``layer`` (the layers below it exact), as a swapped variant sees it."""
        self.check(input)
        tr = model or self.load()
        if head is not None and not gate.is_whole(head, 0, tr.cfg.n_heads - 1):
            raise InputError("qkv.head_range", last=tr.cfg.n_heads - 1, head=head)
        q, k, v, tokens = self.runtime.layer_qkv(tr, input, layer)
        if head is not None:
            q, k, v = (x[:, head : head + 1] for x in (q, k, v))
        return q, k, v, tokens

    def alignments(self, trace) -> dict[str, Alignment]:
        amap = trace.maps["cross"]
        w = amap.weights  # (L, H, T, S)
        return {
            f"L{l} H{h}": _alignment(f"L{l} H{h}", w[l, h], amap.query_labels, amap.key_labels)
            for l in range(w.shape[0])
            for h in range(w.shape[1])
        }

    def forced_alignments(self, source, target, *, model=None, **options) -> dict[str, Alignment]:
        import torch  # heavy: loaded with the model, never by discovery

        swap = self.resolve(options)
        fn = self.runtime.attend_function(swap.get("attend"), swap.get("attend_hp"))
        tr = model or self.load()
        # the positional table holds max_len positions; the target starts with BOS
        source = forced_tokens(source, "source", self.name, tr.max_src)
        target = forced_tokens(target, "target", self.name, tr.cfg.max_len - 1)
        src = torch.tensor([tr.src_vocab.encode(source)])
        tgt_in = torch.tensor([tr.tgt_vocab.encode(target, add_bos=True)])
        with torch.no_grad():
            _, inter = tr(src, tgt_in, fn)
        w = inter.cross[0].numpy()  # (L, H, T, S): row i is the step that produces target[i]
        return {
            f"L{l} H{h}": _alignment(f"L{l} H{h}", w[l, h], target, source)
            for l in range(w.shape[0])
            for h in range(w.shape[1])
        }
