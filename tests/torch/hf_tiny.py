"""Tiny transformers architectures built from their library's configs with random weights (nothing downloaded):
each factory returns (model in eval mode, example args, a function picking the output tensor to compare)."""
from __future__ import annotations

import torch

TEXT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)


def _ids(seed: int = 0, shape=(2, 7), high: int = 99):
    return torch.randint(3, high, shape, generator=torch.Generator().manual_seed(seed))


def _hidden(out):
    return out.last_hidden_state


def gpt2():
    import transformers as T

    cfg = T.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=0, eos_token_id=0)
    return T.GPT2Model(cfg), (_ids(),), _hidden


def bert():
    import transformers as T

    return T.BertModel(T.BertConfig(**TEXT), add_pooling_layer=False), (_ids(),), _hidden


def roberta():
    import transformers as T

    return T.RobertaModel(T.RobertaConfig(**TEXT, pad_token_id=1), add_pooling_layer=False), (_ids(),), _hidden


def distilbert():
    import transformers as T

    cfg = T.DistilBertConfig(vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=37)
    return T.DistilBertModel(cfg), (_ids(),), _hidden


def llama():
    import transformers as T

    cfg = T.LlamaConfig(**TEXT, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0)
    return T.LlamaModel(cfg), (_ids(),), _hidden


def qwen2():
    import transformers as T

    cfg = T.Qwen2Config(**TEXT, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0)
    return T.Qwen2Model(cfg), (_ids(),), _hidden


def t5_encoder():
    import transformers as T

    cfg = T.T5Config(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4, pad_token_id=0,
                     decoder_start_token_id=0)
    return T.T5EncoderModel(cfg), (_ids(),), _hidden


def vit():
    import transformers as T

    cfg = T.ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=37)
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    return T.ViTModel(cfg, add_pooling_layer=False), (x,), _hidden


def resnet():
    import transformers as T

    cfg = T.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                         layer_type="bottleneck")
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    return T.ResNetModel(cfg), (x,), _hidden


def convnext():
    import transformers as T

    cfg = T.ConvNextConfig(num_channels=3, hidden_sizes=[8, 16], depths=[1, 1], num_stages=2)
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(3))
    return T.ConvNextModel(cfg), (x,), _hidden


def whisper_encoder():
    import transformers as T

    cfg = T.WhisperConfig(vocab_size=99, d_model=32, encoder_layers=2, encoder_attention_heads=4,
                          decoder_layers=1, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
                          num_mel_bins=8, max_source_positions=8, max_target_positions=16, pad_token_id=0,
                          bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)
    x = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(4))
    return T.WhisperModel(cfg).get_encoder(), (x,), _hidden


ARCHITECTURES = {f.__name__: f for f in (gpt2, bert, roberta, distilbert, llama, qwen2, t5_encoder, vit, resnet,
                                          convnext, whisper_encoder)}


def build(name: str):
    """(model in eval mode, args, output picker), the weights seeded."""
    torch.manual_seed(0)
    model, args, pick = ARCHITECTURES[name]()
    return model.eval(), args, pick
