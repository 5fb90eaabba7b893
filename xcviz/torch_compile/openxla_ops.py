"""The aten ops torch_xla lowers (its codegen/xla_native_functions.yaml: full_codegen, ir_gen, supported and
autograd lists, as `name` or `name.overload`): what the openxla backend's partitioner finds supported."""
from __future__ import annotations

LOWERED = frozenset("""
abs acos acosh addcdiv addcmul all all.dim amax amin any any.dim argmax argmin asin asinh atan atanh
binary_cross_entropy bitwise_not ceil cholesky clamp.Tensor clamp_max.Tensor clamp_min.Tensor cos cosh elu eq.Scalar
eq.Tensor erf erfc erfinv exp expm1 floor frac ge.Scalar ge.Tensor glu gt.Scalar gt.Tensor hardshrink hardsigmoid
hardswish inverse isnan leaky_relu le.Scalar le.Tensor logdet logical_and logical_not logical_or logical_xor
log_sigmoid_forward lt.Scalar lt.Tensor masked_fill.Scalar masked_fill.Tensor maximum minimum ne.Scalar ne.Tensor
reciprocal relu repeat round rsqrt selu sgn sigmoid sign silu sin sinh softshrink sqrt take tan tanh tril triu trunc
_adaptive_avg_pool2d _adaptive_avg_pool3d atan2 baddbmm bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor
__lshift__.Scalar __lshift__.Tensor __rshift__.Scalar __rshift__.Tensor _copy_from _index_put_impl_ _linalg_slogdet
_linalg_svd _local_scalar_dense _log_softmax _softmax _to_copy _unsafe_view adaptive_max_pool2d add.Scalar add.Tensor
addmm alias_copy as_strided_copy as_strided_scatter avg_pool2d avg_pool3d bernoulli bernoulli.p
binary_cross_entropy_with_logits bmm cat celu clamp clamp_max clamp_min clone constant_pad_nd convolution_overrideable
copy copy_ count_nonzero count_nonzero.dim_IntList cross cumprod cumsum detach_copy diag diagonal_copy diagonal_scatter
div.Scalar div.Tensor div.Tensor_mode dot embedding_dense_backward empty.memory_format empty_strided expand_copy
exponential_ fill_.Scalar fill_.Tensor flip floor_divide fmod.Scalar fmod.Tensor full gather gelu hardtanh index.Tensor
index_add index_copy index_fill_.int_Scalar index_fill_.int_Tensor index_put_ index_select kl_div kthvalue lerp.Scalar
lerp.Tensor lift lift_fresh linalg_inv_ex linalg_vector_norm linspace log logit log1p log2 log10 logsumexp
masked_scatter masked_select max max.dim min min.dim max_pool2d_with_indices max_pool3d_with_indices max_unpool2d
max_unpool3d mean mean.dim mish mm mse_loss mul.Scalar mul.Tensor multinomial mv nan_to_num native_batch_norm
native_dropout neg nll_loss2d_forward nll_loss_forward nonzero norm.Scalar norm.ScalarOpt_dim norm.ScalarOpt_dim_dtype
norm.ScalarOpt_dtype normal.float_Tensor normal.Tensor_float normal.Tensor_Tensor normal_ permute_copy pow.Scalar
pow.Tensor_Scalar pow.Tensor_Tensor _prelu_kernel prod prod.dim_int put_ qr random_ random_.from random_.to randperm
reflection_pad2d remainder.Scalar remainder.Tensor replication_pad1d replication_pad2d replication_pad3d resize_ roll
rrelu_with_noise rsub.Scalar rsub.Tensor scatter.reduce scatter.src scatter.value scatter.value_reduce scatter_add
scatter_reduce.two select_copy.int select_scatter set_.source_Tensor slice_copy.Tensor slice_scatter smooth_l1_loss
softplus sort sort.stable split_copy.Tensor split_with_sizes_copy squeeze_copy squeeze_copy.dim squeeze_copy.dims stack
std std.correction std.dim std_mean.correction sub.Scalar sub.Tensor sum sum.dim_IntList svd t_copy threshold topk
trace transpose_copy.int triangular_solve unbind_copy.int uniform_ unsqueeze_copy upsample_bilinear2d
upsample_nearest2d var.correction var_mean.correction view_as_complex_copy view_as_real_copy view_copy where.self
xlogy.Tensor zero_ _native_batch_norm_legit _native_batch_norm_legit.no_stats affine_grid_generator block_diag
_convolution diag_embed embedding _euclidean_dist new_empty_strided narrow_copy pixel_shuffle pixel_unshuffle reshape
select.int slice.Tensor t _trilinear linalg_pinv.atol_rtol_tensor _cdist_forward _pdist_forward mvlgamma permute
as_strided diagonal expand view einsum max_pool2d max_pool3d native_layer_norm native_group_norm
""".split())
