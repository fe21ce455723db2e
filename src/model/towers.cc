// Vision and audio towers: the encoders multimodal checkpoints carry beside
// the text model, and their projectors into it. Counted from vision_config
// the way each family's modeling code builds them; a tower kvbill cannot
// count is an error (--text-only leaves towers out).
#include <algorithm>

#include "model/families.h"

namespace kvbill::model_config {
namespace {

// One pre-norm ViT block: attention (q, k, v, o with biases), an ungated
// MLP with biases, two LayerNorms with biases.
Int VitBlock(Int d, Int m) { return 4 * d * d + 4 * d + 2 * d * m + m + d + 4 * d; }

// A two-layer projector: (in x in + in) then (in x out + out), with a
// LayerNorm of `norm` elements before it.
Int MergerMlp(Int in, Int out, Int norm) { return 2 * norm + in * in + in + in * out + out; }

Result<Int> Get(const Fields& v, std::initializer_list<const char*> keys, Int default_value = 0) {
  auto x = v.FirstInt(keys);
  if (!x) return x.error();
  if (!x->has_value()) {
    if (default_value > 0) return default_value;
    return v.Bad(*keys.begin(), "missing");
  }
  return **x;
}

#define KV_GET(var, ...)                \
  auto var##_r = Get(__VA_ARGS__);      \
  if (!var##_r) return var##_r.error(); \
  const Int var = *var##_r

// SigLIP (siglip/modeling_siglip.py) with Gemma 3's projector.
Result<Int> SiglipTower(const Fields& v, bool gemma3_projector, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 768);
  KV_GET(m, v, {"intermediate_size"}, 3072);
  KV_GET(layers, v, {"num_hidden_layers"}, 12);
  KV_GET(patch, v, {"patch_size"}, 16);
  KV_GET(image, v, {"image_size"}, 224);
  KV_GET(channels, v, {"num_channels"}, 3);
  auto head = v.Bool("vision_use_head", true);
  if (!head) return head.error();
  Int n = channels * patch * patch * d + d + (image / patch) * (image / patch) * d;
  n += layers * VitBlock(d, m) + 2 * d;
  if (*head) n += d + 4 * d * d + 4 * d + 2 * d + 2 * d * m + m + d;  // attention-pooling head
  if (gemma3_projector) n += d + d * text_hidden;  // mm_soft_emb_norm, mm_input_projection
  return n;
}

// PaliGemma (vLLM paligemma.py): SigLIP and a biased linear projector into
// projection_dim (the text model's width).
Result<Int> PaliGemmaTower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 768);
  KV_GET(proj, v, {"projection_dim"}, text_hidden);
  auto siglip = SiglipTower(v, /*gemma3_projector=*/false, text_hidden);
  if (!siglip) return siglip.error();
  return *siglip + d * proj + proj;
}

// Gemma 4 vision (transformers gemma4/modeling_gemma4.py, Gemma4VisionModel
// and Gemma4MultimodalEmbedder): a patch projection of 3 x patch^2 inputs,
// x and y position tables of position_embedding_size rows, blocks of q/k/v/o
// (with q and k norms of head_dim), a gated MLP and four RMSNorms, with
// use_clipped_linears four clipping bounds per linear layer; standardize
// adds a bias and a scale; the projector into the text model is one matrix
// after an unscaled norm.
Result<Int> Gemma4VisionTower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 768);
  KV_GET(m, v, {"intermediate_size"}, 3072);
  KV_GET(layers, v, {"num_hidden_layers"}, 16);
  KV_GET(heads, v, {"num_attention_heads"}, 12);
  KV_GET(kv_heads, v, {"num_key_value_heads"}, 12);
  KV_GET(head_dim, v, {"head_dim"}, 64);
  KV_GET(patch, v, {"patch_size"}, 16);
  KV_GET(positions, v, {"position_embedding_size"}, 10240);
  auto clipped = v.Bool("use_clipped_linears", false);
  if (!clipped) return clipped.error();
  auto standardize = v.Bool("standardize", false);
  if (!standardize) return standardize.error();
  const Int q = heads * head_dim, kv = kv_heads * head_dim;
  const Int block =
      2 * d * q + 2 * d * kv + 2 * head_dim + 3 * d * m + 4 * d + (*clipped ? 7 * 4 : 0);
  Int n = 3 * patch * patch * d + 2 * positions * d + layers * block;
  if (*standardize) n += 2 * d;
  return n + d * text_hidden;
}

// Gemma 4 audio (transformers gemma4/modeling_gemma4.py, Gemma4AudioModel
// and Gemma4MultimodalEmbedder; vLLM gemma4_mm.py builds the same modules):
// a subsampling projection (two 3 x 3 convolutions of C0 and C1 channels
// with weight-only norms, then a linear layer of (C0 / 4) x C1 inputs into
// hidden), conformer layers (two feed-forward modules hidden -> 4 hidden ->
// hidden; q, k, v, output and relative-key projections with a per-dim
// scale of head_dim; a light convolution of a GLU linear into 2 hidden, a
// depthwise kernel and a linear out; nine norms), an output projection into
// output_proj_dims with a bias, and an unweighted norm and a projection
// into the text model. With use_clipped_linears each of a layer's ten
// clipped linear layers stores four clipping bounds (counted, as the
// vision tower's are).
Result<Int> Gemma4AudioTower(const Fields& v, Int text_hidden) {
  KV_GET(h, v, {"hidden_size"}, 1024);
  KV_GET(layers, v, {"num_hidden_layers"}, 12);
  KV_GET(heads, v, {"num_attention_heads"}, 8);
  KV_GET(kernel, v, {"conv_kernel_size"}, 5);
  KV_GET(out, v, {"output_proj_dims"}, 1536);
  auto clipped = v.Bool("use_clipped_linears", true);
  if (!clipped) return clipped.error();
  Int c0 = 128, c1 = 32;
  auto channels = v.OptionalIntList("subsampling_conv_channels");
  if (!channels) return channels.error();
  if (channels->has_value()) {
    if ((*channels)->size() != 2 || (**channels)[0] <= 0 || (**channels)[1] <= 0) {
      return v.Bad("subsampling_conv_channels", "must be two positive channel counts");
    }
    c0 = (**channels)[0];
    c1 = (**channels)[1];
  }
  if (h % heads != 0) {
    return v.Bad("num_attention_heads",
                 std::to_string(heads) + " does not divide hidden_size " + std::to_string(h));
  }
  const Int subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + h * (c0 / 4) * c1;
  const Int layer = 24 * h * h + 9 * h + kernel * h + h / heads + (*clipped ? 10 * 4 : 0);
  return subsample + layers * layer + out * h + out + out * text_hidden;
}

// Llama 4 vision (llama4/modeling_llama4.py): unfold patch embedding, class
// and position embeddings, pre/post LayerNorms, blocks, the pixel-shuffle
// MLP and the projector into the text model.
Result<Int> Llama4Tower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 768);
  KV_GET(m, v, {"intermediate_size"}, 3072);
  KV_GET(layers, v, {"num_hidden_layers"}, 34);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(image, v, {"image_size"}, 448);
  KV_GET(channels, v, {"num_channels"}, 3);
  KV_GET(proj_in, v, {"projector_input_dim"}, 4096);
  KV_GET(proj_out, v, {"projector_output_dim"}, 4096);
  KV_GET(out, v, {"vision_output_dim"}, 7680);
  const Int grid = image / patch;
  Int n = channels * patch * patch * d + d + (grid * grid + 1) * d + 4 * d;
  n += layers * VitBlock(d, m);
  n += m * proj_in + proj_out * proj_out;  // pixel-shuffle MLP fc1, fc2
  n += out * text_hidden;                  // multi_modal_projector.linear_1
  return n;
}

// Qwen2-VL (qwen2_vl/modeling_qwen2_vl.py): conv3d patches, blocks with a
// fused qkv, the 2x2 patch merger.
Result<Int> Qwen2VlTower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"embed_dim"}, 1280);
  KV_GET(layers, v, {"depth"}, 32);
  KV_GET(ratio, v, {"mlp_ratio"}, 4);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(temporal, v, {"temporal_patch_size"}, 2);
  KV_GET(channels, v, {"in_chans", "in_channels"}, 3);
  KV_GET(merge, v, {"spatial_merge_size"}, 2);
  KV_GET(out, v, {"hidden_size"}, text_hidden);
  const Int in = d * merge * merge;
  return channels * temporal * patch * patch * d + layers * VitBlock(d, ratio * d) +
         MergerMlp(in, out, d);
}

// Qwen2.5-VL (qwen2_5_vl/modeling_qwen2_5_vl.py): RMSNorms, a gated MLP
// with biases, the 2x2 patch merger.
Result<Int> Qwen25VlTower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 1280);
  KV_GET(m, v, {"intermediate_size"}, 3420);
  KV_GET(layers, v, {"depth"}, 32);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(temporal, v, {"temporal_patch_size"}, 2);
  KV_GET(channels, v, {"in_chans", "in_channels"}, 3);
  KV_GET(merge, v, {"spatial_merge_size"}, 2);
  KV_GET(out, v, {"out_hidden_size"}, text_hidden);
  const Int block = 4 * d * d + 4 * d + 3 * d * m + 2 * m + d + 2 * d;
  const Int in = d * merge * merge;
  return channels * temporal * patch * patch * d + layers * block + d + in * in + in + in * out +
         out;
}

// Qwen3-VL / Qwen3.5 (qwen3_vl/modeling_qwen3_vl.py): conv3d patches with a
// bias, learned position embeddings, blocks, the patch merger and one
// DeepStack merger per deepstack_visual_indexes entry. Absent, the list is
// Qwen3VLVisionConfig's [8, 16, 24] (three mergers); Qwen3.5's vision config
// has no such key and its model builds none (`deepstack`: false).
Result<Int> Qwen3VlTower(const Fields& v, Int text_hidden, bool deepstack_default) {
  KV_GET(d, v, {"hidden_size"}, 1152);
  KV_GET(m, v, {"intermediate_size"}, 4304);
  KV_GET(layers, v, {"depth"}, 27);
  KV_GET(patch, v, {"patch_size"}, 16);
  KV_GET(temporal, v, {"temporal_patch_size"}, 2);
  KV_GET(channels, v, {"in_channels", "in_chans"}, 3);
  KV_GET(merge, v, {"spatial_merge_size"}, 2);
  KV_GET(positions, v, {"num_position_embeddings"}, 2304);
  KV_GET(out, v, {"out_hidden_size"}, text_hidden);
  auto deepstack = v.OptionalIntList("deepstack_visual_indexes");
  if (!deepstack) return deepstack.error();
  const Int extra = deepstack->has_value() ? static_cast<Int>((*deepstack)->size())
                    : deepstack_default    ? 3
                                           : 0;
  const Int in = d * merge * merge;
  return channels * temporal * patch * patch * d + d + positions * d + layers * VitBlock(d, m) +
         MergerMlp(in, out, d) + extra * MergerMlp(in, out, in);
}

// Kimi K2.5's MoonViT (the model repository's modeling_kimi_k25.py):
// patches, blocks, a final LayerNorm and the patch-merger projector.
// Kimi-VL's MoonViT (vLLM moonvit.py) is the same tower with a learned
// init_pos_emb_height x init_pos_emb_width position table
// (Learnable2DInterpPosEmb), which K2.5's fixed positions do not have.
Result<Int> MoonVitTower(const Fields& v, Int text_hidden, bool learned_positions = false) {
  KV_GET(d, v, {"vt_hidden_size", "hidden_size"}, 1152);
  KV_GET(m, v, {"vt_intermediate_size", "intermediate_size"}, 4304);
  KV_GET(layers, v, {"vt_num_hidden_layers", "num_hidden_layers"}, 27);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(mm, v, {"mm_hidden_size"}, d);
  KV_GET(out, v, {"text_hidden_size"}, text_hidden);
  KV_GET(grid_h, v, {"init_pos_emb_height"}, 64);
  KV_GET(grid_w, v, {"init_pos_emb_width"}, 64);
  const Int in = mm * 4;  // 2 x 2 merge kernel
  const Int positions = learned_positions ? grid_h * grid_w * d : 0;
  return 3 * patch * patch * d + d + positions + layers * VitBlock(d, m) + 2 * d +
         MergerMlp(in, out, mm);
}

// Kimi-K3's MoonViT3d (the model repository's modeling_kimi_k3.py,
// MoonViT3dPretrainedModel): a patch convolution, a learned
// init_pos_emb_height x init_pos_emb_width position grid, blocks of two
// norms, a fused qkv of qkv_hidden_size, an output projection and a
// two-layer MLP, a final norm; the patchmergerv2 projector (two Linears
// without bias over the 2 x 2 merged patches, an RMSNorm after).
Result<Int> MoonVit3dTower(const Fields& v, Int text_hidden) {
  KV_GET(d, v, {"vt_hidden_size"}, 0);
  KV_GET(f, v, {"vt_intermediate_size"}, 0);
  KV_GET(layers, v, {"vt_num_hidden_layers"}, 0);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(grid_h, v, {"init_pos_emb_height"}, 64);
  KV_GET(grid_w, v, {"init_pos_emb_width"}, 64);
  KV_GET(q, v, {"qkv_hidden_size"}, d);
  KV_GET(mm, v, {"mm_hidden_size"}, d);
  const std::string norm = v.StringOr("norm_type", "rmsnorm");
  if (norm != "rmsnorm" && norm != "layernorm") {
    return v.Bad("norm_type", "must be \"rmsnorm\" or \"layernorm\", got \"" + norm + "\"");
  }
  const Int norm_size = norm == "rmsnorm" ? d : 2 * d;
  const std::string projector = v.StringOr("mm_projector_type", "patchmergerv2");
  if (projector != "patchmergerv2") {
    return v.Bad("mm_projector_type",
                 "is \"" + projector + "\": kvbill counts only the patchmergerv2 projector");
  }
  Int merge = 4;
  if (v.Has("merge_kernel_size")) {
    const json& k = v.Get("merge_kernel_size");
    const auto side = [](const json& x) {
      return x.is_number_integer() && x.get<Int>() >= 1 && x.get<Int>() <= 64;
    };
    if (!k.is_array() || k.size() != 2 || !side(k[0]) || !side(k[1])) {
      return v.Bad("merge_kernel_size", "must be two whole numbers in [1, 64]");
    }
    merge = k[0].get<Int>() * k[1].get<Int>();
  }
  auto attn_bias = v.Bool("attn_bias", false);
  if (!attn_bias) return attn_bias.error();
  auto linear_bias = v.Bool("linear_bias", false);
  if (!linear_bias) return linear_bias.error();
  auto patch_bias = v.Bool("patch_embed_proj_bias", false);
  if (!patch_bias) return patch_bias.error();
  const Int block = 2 * norm_size + 3 * q * d + (*attn_bias ? 3 * q : 0) + q * d +
                    (*attn_bias ? d : 0) + 2 * d * f + (*linear_bias ? f + d : 0);
  const Int tower = 3 * patch * patch * d + (*patch_bias ? d : 0) + grid_h * grid_w * d +
                    layers * block + norm_size;
  const Int m = mm * merge;
  return tower + m * m + m * text_hidden + text_hidden;
}

// A setting MiniMax-M3-VL keeps in img_token_compression_config (inside
// vision_config, or at the top level), or vision_config's own key.
Result<Int> CompressionSetting(const Fields& v, const json& root, const char* key, Int fallback) {
  for (const json* where : {&v.object(), &root}) {
    auto it = where->find("img_token_compression_config");
    if (it == where->end() || !it->is_object()) continue;
    const Fields c(*it, v.source(),
                   (where == &root ? "" : v.prefix()) + "img_token_compression_config.");
    auto x = c.OptionalInt(key);
    if (!x) return x.error();
    if (x->has_value()) return **x;
  }
  return Get(v, {key}, fallback);
}

// MiniMax-M3-VL (transformers minimax_m3_vl/modeling_minimax_m3_vl.py;
// NVIDIA NeMo Automodel's vision_encoder.py): a CLIP-like ViT without class
// or position embeddings (3-D rotary) or a post-norm: a Conv3d patch
// embedding of temporal_patch_size frames without bias, a pre-LayerNorm and
// the blocks. The projector (hidden -> projector_hidden_size -> text
// hidden, biased by multimodal_projector_bias) runs per patch; then the
// spatial_merge_size^2 patch merge (text hidden x merge^2 -> projector
// hidden -> text hidden, biased).
Result<Int> MiniMaxM3VlTower(const Fields& v, const json& root, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 1280);
  KV_GET(m, v, {"intermediate_size"}, 5120);
  KV_GET(layers, v, {"num_hidden_layers"}, 32);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(channels, v, {"num_channels"}, 3);
  auto t = CompressionSetting(v, root, "temporal_patch_size", 2);
  if (!t) return t.error();
  auto merge = CompressionSetting(v, root, "spatial_merge_size", 2);
  if (!merge) return merge.error();
  const Fields top(root, v.source(), "");
  KV_GET(hidden, top, {"projector_hidden_size"}, 6144);
  auto bias = top.Bool("multimodal_projector_bias", true);
  if (!bias) return bias.error();
  const Int b = *bias ? 1 : 0;
  const Int tower = channels * *t * patch * patch * d + 2 * d + layers * VitBlock(d, m);
  const Int projector = d * hidden + b * hidden + hidden * text_hidden + b * text_hidden;
  const Int merger =
      text_hidden * *merge * *merge * hidden + hidden + hidden * text_hidden + text_hidden;
  return tower + projector + merger;
}

// Muse-Glimmer (transformers muse_glimmer/modeling_muse_glimmer.py; vLLM
// muse_glimmer.py): a linear patch embedding of patch_temporal x 3 x
// patch^2 inputs without bias, a learned pos_emb_height x pos_emb_width
// position table, pre and post LayerNorms, the blocks; the weightless pixel
// shuffle widens to out_hidden_size, and the unbiased adapter (fc1, fc2)
// and projection map it through projector_hidden_size to the text model.
Result<Int> MuseGlimmerTower(const Fields& v, const json& root, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 1536);
  KV_GET(m, v, {"intermediate_size"}, 8960);
  KV_GET(layers, v, {"num_hidden_layers"}, 50);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(frames, v, {"patch_temporal"}, 2);
  KV_GET(pos_h, v, {"pos_emb_height"}, 32);
  KV_GET(pos_w, v, {"pos_emb_width"}, 32);
  KV_GET(merge, v, {"merge_size"}, 2);
  const Fields top(root, v.source(), "");
  KV_GET(out, top, {"out_hidden_size"}, d * merge * merge);
  KV_GET(hidden, top, {"projector_hidden_size"}, 4096);
  const Int tower =
      frames * 3 * patch * patch * d + pos_h * pos_w * d + 4 * d + layers * VitBlock(d, m);
  return tower + out * hidden + hidden * hidden + hidden * text_hidden;
}

// Pixtral (transformers pixtral/modeling_pixtral.py) with Mistral 3's
// projector (mistral3/modeling_mistral3.py): an unbiased Conv2d patch
// embedding, an RMSNorm before the blocks, blocks of unbiased q, k, v, o, a
// gated MLP and two RMSNorms (2-D rotary positions: no table); the
// projector is an RMSNorm, the unbiased spatial_merge_size^2 patch merger
// and two linear layers into the text model (biased by
// multimodal_projector_bias), the first over each layer vision_feature_layer
// names.
Result<Int> PixtralTower(const Fields& v, const json& root, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 1024);
  KV_GET(m, v, {"intermediate_size"}, 4096);
  KV_GET(layers, v, {"num_hidden_layers"}, 24);
  KV_GET(patch, v, {"patch_size"}, 16);
  KV_GET(channels, v, {"num_channels"}, 3);
  const Fields top(root, v.source(), "");
  KV_GET(merge, top, {"spatial_merge_size"}, 2);
  auto bias = top.Bool("multimodal_projector_bias", false);
  if (!bias) return bias.error();
  Int features = 1;
  if (top.Has("vision_feature_layer") && top.Get("vision_feature_layer").is_array()) {
    features = std::max<Int>(1, static_cast<Int>(top.Get("vision_feature_layer").size()));
  }
  const Int b = *bias ? 1 : 0;
  const Int tower = channels * patch * patch * d + d + layers * (4 * d * d + 3 * d * m + 2 * d);
  const Int projector = d + merge * merge * d * d + features * d * text_hidden + b * text_hidden +
                        text_hidden * text_hidden + b * text_hidden;
  return tower + projector;
}

// Step 3 (vLLM step3_vl.py): a CLIP-like ViT of pre-norm-free blocks (the
// output of attention and MLP normed before the residual: the same
// parameters as VitBlock), a class embedding, a biased patch Conv2d and a
// table of (image / patch)^2 + 1 positions; then vit_downsampler (Conv2d
// hidden -> output_hidden_size, kernel 2, biased), vit_downsampler2
// (Conv2d output_hidden_size -> 2 x that, kernel 3, biased) and
// vit_large_projector into the text model, biased by projector_bias.
Result<Int> Step3VlTower(const Fields& v, const json& root, Int text_hidden) {
  KV_GET(d, v, {"hidden_size"}, 1792);
  KV_GET(m, v, {"intermediate_size"}, 3072);
  KV_GET(layers, v, {"num_hidden_layers"}, 63);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(image, v, {"image_size"}, 728);
  KV_GET(channels, v, {"num_channels"}, 3);
  KV_GET(out, v, {"output_hidden_size"}, 4096);
  const Fields top(root, v.source(), "");
  auto bias = top.Bool("projector_bias", true);
  if (!bias) return bias.error();
  const Int grid = image / patch;
  const Int tower =
      d + channels * patch * patch * d + d + (grid * grid + 1) * d + layers * VitBlock(d, m);
  const Int down = d * out * 2 * 2 + out + out * 2 * out * 3 * 3 + 2 * out;
  return tower + down + 2 * out * text_hidden + (*bias ? text_hidden : 0);
}

// LLaVA, LLaVA-NeXT and LLaVA-OneVision (vLLM llava.py, llava_next.py,
// llava_onevision.py): a CLIP or SigLIP tower built only up to the deepest
// layer vision_feature_layer names (init_vision_tower_for_llava: -2 leaves
// the last layer out) and without its post-norm (require_post_norm False);
// CLIP: a class embedding, an unbiased patch Conv2d, (image / patch)^2 + 1
// positions and a pre-norm; SigLIP: a biased patch Conv2d, (image /
// patch)^2 positions and, unless vision_use_head is false, its pooling head.
// LLaVA alone also takes Pixtral's tower (Pixtral-12B in Hugging Face's
// format, mistral-community/pixtral-12b; vLLM pixtral.py
// PixtralHFVisionModel): an unbiased patch Conv2d, an RMSNorm before the
// blocks, blocks of two RMSNorms, unbiased q, k, v, o of hidden x hidden
// (head_dim is hidden / heads) and a gated unbiased MLP, no position table
// (2-D rotary) and no post-norm; no patch merger (that is Mistral 3's).
// The projector maps the selected layers' features (hidden x their count)
// to the text model and then text hidden to text hidden, biased by
// multimodal_projector_bias; NeXT and OneVision add an image_newline of
// text hidden.
Result<Int> LlavaTower(const Fields& v, const json& root, const std::string& model_type,
                       Int text_hidden) {
  const std::string type = v.StringOr("model_type", "clip_vision_model");
  const bool clip = type == "clip_vision_model";
  const bool pixtral = type == "pixtral" && model_type == "llava";
  if (!clip && !pixtral && type != "siglip_vision_model") {
    const bool llava = model_type == "llava";
    return v.Bad("model_type",
                 "is \"" + type + "\": kvbill counts " + model_type +
                     (llava ? "'s CLIP, SigLIP or Pixtral towers (clip_vision_model, "
                              "siglip_vision_model, pixtral) only"
                            : "'s CLIP or SigLIP towers (clip_vision_model, siglip_vision_model) "
                              "only"));
  }
  // The class defaults: CLIPVisionConfig's, SiglipVisionConfig's and
  // PixtralVisionConfig's (1,024 wide, MLP 4,096, 24 layers, patch 16).
  KV_GET(d, v, {"hidden_size"}, clip || pixtral ? 1024 : 768);
  KV_GET(m, v, {"intermediate_size"}, clip || pixtral ? 4096 : 3072);
  KV_GET(layers, v, {"num_hidden_layers"}, clip || pixtral ? 24 : 12);
  KV_GET(patch, v, {"patch_size"}, clip ? 14 : 16);
  KV_GET(image, v, {"image_size"}, clip ? 336 : pixtral ? 1024 : 224);
  KV_GET(channels, v, {"num_channels"}, 3);
  const Fields top(root, v.source(), "");
  // vLLM's get_layer_index: a negative index counts from the end (-1: all
  // layers), a positive one is the number of layers run.
  std::vector<Int> indices;
  const std::string key = "vision_feature_layer";
  if (!top.Has(key)) {
    indices.push_back(model_type == "llava_onevision" ? -1 : -2);
  } else if (const json& f = top.Get(key); f.is_number_integer()) {
    indices.push_back(f.get<Int>());
  } else if (f.is_array() && !f.empty()) {
    for (const json& x : f) {
      if (!x.is_number_integer()) return top.Bad(key, "must list whole numbers");
      indices.push_back(x.get<Int>());
    }
  } else {
    return top.Bad(key, "must be a layer index or a list of them");
  }
  Int used = 0;
  for (const Int i : indices) {
    const Int n = i < 0 ? layers + i + 1 : i;
    if (n < 1 || n > layers) {
      return top.Bad(key, "names layer " + std::to_string(i) + " of a tower of " +
                              std::to_string(layers) + " layers");
    }
    used = std::max(used, n);
  }
  Int tower = 0;
  const Int grid = image / patch;
  if (pixtral) {
    KV_GET(heads, v, {"num_attention_heads"}, 16);
    if (d % heads != 0) {
      return v.Bad("num_attention_heads", std::to_string(heads) + " does not divide hidden_size " +
                                              std::to_string(d) +
                                              " (vLLM's pixtral.py asserts it divides)");
    }
    tower = channels * patch * patch * d + d + used * (4 * d * d + 3 * d * m + 2 * d);
  } else if (clip) {
    tower = d + channels * patch * patch * d + (grid * grid + 1) * d + 2 * d;
  } else {
    tower = channels * patch * patch * d + d + grid * grid * d;
    auto head = v.Bool("vision_use_head", true);
    if (!head) return head.error();
    if (*head) tower += d + 4 * d * d + 4 * d + 2 * d + 2 * d * m + m + d;
  }
  if (!pixtral) tower += used * VitBlock(d, m);  // Pixtral's blocks are counted above
  auto bias = top.Bool("multimodal_projector_bias", true);
  if (!bias) return bias.error();
  const Int b = *bias ? 1 : 0;
  const Int features = static_cast<Int>(indices.size());
  const Int projector =
      features * d * text_hidden + b * text_hidden + text_hidden * text_hidden + b * text_hidden;
  const Int newline = model_type == "llava" ? 0 : text_hidden;
  return tower + projector + newline;
}

// Phi-3-vision and Phi-3.5-vision (vLLM phi3v.py): img_processor names
// the tower, but vLLM builds its fixed CLIP ViT-L/14-336 whatever the name
// (1,024 wide, MLP 4,096, 24 layers, patch 14 at 336), up to
// img_processor.layer_idx (default -2: 23 layers; a positive index builds
// index + 1), with its post-norm only when every layer is built; then the
// HD transform's separators glb_GN and sub_GN (4 x image_dim_out each) and
// img_projection, 4 x image_dim_out -> text hidden -> text hidden, biased.
Result<Int> Phi3VTower(const json& root, const std::string& source, Int text_hidden) {
  const Fields top(root, source, "");
  const Fields img(top.Get("img_processor"), source, "img_processor.");
  KV_GET(out, img, {"image_dim_out"}, 1024);
  auto index = img.IntOr("layer_idx", -2, -1000000);
  if (!index) return index.error();
  constexpr Int d = 1024, m = 4096, layers = 24, patch = 14, grid = 336 / 14;
  const Int used = *index < 0 ? layers + *index + 1 : *index + 1;
  if (used < 1 || used > layers) {
    return img.Bad("layer_idx", "is " + std::to_string(*index) +
                                    ", outside the 24 layers of the CLIP tower vLLM builds");
  }
  if (!top.Has("embd_layer") || !top.Get("embd_layer").is_object()) {
    return top.Bad("embd_layer", "missing");
  }
  const Fields embd(top.Get("embd_layer"), source, "embd_layer.");
  auto hd = embd.Bool("use_hd_transform", false);
  if (!hd) return hd.error();
  if (!*hd) {
    return embd.Bad("use_hd_transform",
                    "is not true: vLLM's phi3v builds the HD transform only (it asserts "
                    "use_hd_transform and with_learnable_separator)");
  }
  const Int clip = d + 3 * patch * patch * d + (grid * grid + 1) * d + 2 * d +
                   used * VitBlock(d, m) + (used == layers ? 2 * d : 0);
  const Int separators = 2 * 4 * out;
  const Int projection =
      4 * out * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden;
  return clip + separators + projection;
}

// GLM-4.1V / GLM-4.5V / GLM-4.6V (vLLM glm4_1v.py, Glm4vVisionTransformer):
// a biased Conv3d patch embedding over temporal_patch_size frames, a
// learned (image_size / patch_size)^2 position table, depth blocks of two
// RMSNorms, unbiased qkv and proj and a gated unbiased MLP of
// out_hidden_size, a post-conv and a post norm, a biased Conv2d downsample
// to out_hidden_size over spatial_merge_size^2 patches, and the merger:
// proj out x out, a LayerNorm, a gated MLP of intermediate_size, unbiased.
Result<Int> Glm4vTower(const Fields& v) {
  KV_GET(d, v, {"hidden_size"}, 1536);
  KV_GET(depth, v, {"depth"}, 24);
  KV_GET(out, v, {"out_hidden_size"}, 4096);
  KV_GET(inter, v, {"intermediate_size"}, 13696);
  KV_GET(patch, v, {"patch_size"}, 14);
  KV_GET(frames, v, {"temporal_patch_size"}, 2);
  KV_GET(merge, v, {"spatial_merge_size"}, 2);
  KV_GET(image, v, {"image_size"}, 336);
  KV_GET(channels, v, {"in_channels"}, 3);
  const Int grid = image / patch;
  const Int patches = channels * frames * patch * patch * d + d + grid * grid * d;
  const Int block = 2 * d + 4 * d * d + 3 * d * out;
  const Int down = d * out * merge * merge + out + 2 * d;
  const Int merger = out * out + 2 * out + 3 * out * inter;
  return patches + depth * block + down + merger;
}

#undef KV_GET  // the library builds in unity batches: it would reach the next file

}  // namespace

Status BuildTowers(const json& root, const std::string& source, const std::string& model_type,
                   Int text_hidden, ModelBuilder* b) {
  // The way out, on the command line and in a scenario.
  const std::string leave_out =
      "--text-only, or a scenario's \"model\": {\"text_only\": true}, leaves the towers out";
  if (!root.is_object()) return OkStatus();
  // Phi-3-vision (phi3_v) keeps its CLIP tower's settings in img_processor;
  // another model type with one is refused, not left out silently.
  if (auto it = root.find("img_processor"); it != root.end() && it->is_object()) {
    if (model_type != "phi3_v") {
      return Error(source +
                   ": img_processor: kvbill cannot count the image tower of model_type \"" +
                   model_type + "\" (" + leave_out + ")");
    }
    auto n = Phi3VTower(root, source, text_hidden);
    if (!n) return n.error();
    b->BeginTower(ParamRole::kVision);
    b->Matrix(ParamRole::kVision, "visual", 1, *n);
    b->EndOverride();
    return OkStatus();  // vLLM's phi3v reads no vision_config
  }
  // Qwen-VL (v1) keeps its ViT in a top-level "visual" object: not counted,
  // so not left out silently either.
  if (auto it = root.find("visual"); it != root.end() && it->is_object()) {
    return Error(source + ": visual: kvbill cannot count the image tower of model_type \"" +
                 model_type + "\" (" + leave_out + ")");
  }
  // Phi-4-multimodal keeps its image tower in embd_layer.image_embd_layer
  // and its audio tower in audio_processor: not counted, so not left out
  // silently either.
  if (auto it = root.find("audio_processor"); it != root.end() && it->is_object()) {
    return Error(source +
                 ": audio_processor: kvbill cannot count the audio tower of model_type \"" +
                 model_type + "\" (" + leave_out + ")");
  }
  if (auto it = root.find("embd_layer");
      it != root.end() && it->is_object() && it->contains("image_embd_layer")) {
    return Error(source + ": embd_layer.image_embd_layer: kvbill cannot count the image tower of " +
                 "model_type \"" + model_type + "\" (" + leave_out + ")");
  }
  // Another part of a wrapper config that is a network of its own (Granite
  // Speech's encoder_config and projector_config): not counted, so not left
  // out silently either.
  if (root.contains("text_config") || root.contains("llm_config") ||
      root.contains("language_config")) {
    for (const auto& [key, value] : root.items()) {
      if (!key.ends_with("_config") || !value.is_object() || key == "text_config" ||
          key == "llm_config" || key == "language_config" || key == "vision_config" ||
          key == "audio_config") {
        continue;
      }
      for (const char* size :
           {"num_hidden_layers", "num_layers", "hidden_size", "hidden_dim", "d_model", "n_layer"}) {
        if (value.contains(size)) {
          return Error(source + ": " + key + ": kvbill cannot count this part of model_type \"" +
                       model_type + "\" (" + leave_out + ")");
        }
      }
    }
  }
  // Every tower kvbill cannot count is named (Qwen3-Omni's thinker has a
  // vision and an audio tower), not only the first.
  std::string uncounted;
  for (const char* key : {"vision_config", "audio_config"}) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) continue;
    const std::string k = key;
    if (!it->is_object()) return Error(source + ": " + k + ": must be an object, got " + Show(*it));
    const Fields v(*it, source, k + ".");
    const std::string type = v.StringOr("model_type", "");
    Result<Int> n = Int{0};
    if (k == "audio_config" && (model_type == "gemma4" || type == "gemma4_audio")) {
      n = Gemma4AudioTower(v, text_hidden);
    } else if (k == "audio_config") {
      n = Error(source + ": audio_config: kvbill cannot count the audio tower of model_type \"" +
                model_type + "\" (" + leave_out + ")");
    } else if ((model_type == "mistral3" || model_type == "ministral3") && type == "pixtral") {
      n = PixtralTower(v, root, text_hidden);
    } else if (model_type == "llava" || model_type == "llava_next" ||
               model_type == "llava_onevision") {
      n = LlavaTower(v, root, model_type, text_hidden);
    } else if (model_type == "minimax_m3_vl") {
      n = MiniMaxM3VlTower(v, root, text_hidden);
    } else if (model_type == "muse_glimmer" || type == "muse_glimmer_vision") {
      n = MuseGlimmerTower(v, root, text_hidden);
    } else if (model_type == "gemma3") {
      n = SiglipTower(v, /*gemma3_projector=*/true, text_hidden);
    } else if (model_type == "paligemma") {
      n = PaliGemmaTower(v, text_hidden);
    } else if (model_type == "gemma4" || type == "gemma4_vision") {
      n = Gemma4VisionTower(v, text_hidden);
    } else if (model_type == "llama4") {
      n = Llama4Tower(v, text_hidden);
    } else if (model_type == "qwen2_vl") {
      n = Qwen2VlTower(v, text_hidden);
    } else if (model_type == "qwen2_5_vl") {
      n = Qwen25VlTower(v, text_hidden);
    } else if (model_type == "qwen3_vl" || model_type == "qwen3_vl_moe" ||
               model_type == "qwen3_5" || model_type == "qwen3_5_moe") {
      n = Qwen3VlTower(v, text_hidden, model_type == "qwen3_vl" || model_type == "qwen3_vl_moe");
    } else if (model_type == "glm4v" || model_type == "glm4v_moe") {
      n = Glm4vTower(v);
    } else if (model_type == "step3_vl") {
      n = Step3VlTower(v, root, text_hidden);
    } else if (model_type == "kimi_k25") {
      n = MoonVitTower(v, text_hidden);
    } else if (model_type == "kimi_vl") {
      n = MoonVitTower(v, text_hidden, /*learned_positions=*/true);
    } else if (model_type == "kimi_k3") {
      n = MoonVit3dTower(v, text_hidden);
    } else {
      n = Error(source + ": vision_config: kvbill cannot count the vision tower of model_type \"" +
                model_type +
                "\" (known: gemma3, gemma4, llama4, qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, "
                "qwen3_5, qwen3_5_moe, kimi_k25, kimi_k3, kimi_vl, minimax_m3_vl, muse_glimmer, "
                "step3_vl, glm4v, glm4v_moe, "
                "llava, llava_next, llava_onevision, mistral3 (pixtral), paligemma); " +
                leave_out);
    }
    if (!n) {
      uncounted += (uncounted.empty() ? "" : "; ") + n.error().message();
      continue;
    }
    const ParamRole role = k == "audio_config" ? ParamRole::kAudio : ParamRole::kVision;
    b->BeginTower(role);
    // One group: the tower's linear layers and the rest are not told apart.
    b->Matrix(role, k == "audio_config" ? "audio_tower" : "visual", 1, *n);
    b->EndOverride();
  }
  if (!uncounted.empty()) return Error(uncounted);
  return OkStatus();
}

}  // namespace kvbill::model_config
