#include "executor/layer_stack_compute.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "executor/model/kernel_scratch.h"
#include "executor/model/layer_kernels.h"

namespace stowage::executor {

template <class Model>
struct LayerStackCompute<Model>::Micro {
  std::vector<int32_t> inputs, targets;
  std::vector<std::span<float>> x;                             // x[l]: output of layer l (0 = embedding), in its kept region
  std::vector<typename Architecture::BlockSaved> saved;        // by layer
  typename Architecture::FinalSaved final_saved;
  // In the embedding's kept region, which lasts the micro-batch: d loss /
  // d (output of the layer being back-propagated), carried down the layers,
  // and with a tied head the head's gradient for the token table.
  std::span<float> flow;
  std::span<float> d_tied;
};

namespace {

int64_t bytes_of(std::span<const float> v) {
  return static_cast<int64_t>(v.size() * sizeof(float));
}

}  // namespace

template <class Model>
std::span<const float> LayerStackCompute<Model>::own_params(int layer, std::span<const float> params) const {
  if constexpr (Architecture::kTiedHead) {
    return params.first(static_cast<size_t>(model_.layer_param_count(layer)));
  } else {
    return params;
  }
}

template <class Model>
std::span<const float> LayerStackCompute<Model>::tied_table(int layer, std::span<const float> params) const {
  if constexpr (Architecture::kTiedHead) {
    return model_.token_embedding(params.subspan(static_cast<size_t>(model_.layer_param_count(layer))));
  } else {
    return {};  // the head is the final layer's own
  }
}

template <class Model>
int64_t LayerStackCompute<Model>::embedding_kept_floats() const {
  const int64_t width = mb_.tokens() * model_.shape().d_model;
  if constexpr (Architecture::kTiedHead) {
    return 2 * width + model_.shape().vocab * model_.shape().d_model;
  } else {
    return 2 * width;
  }
}

template <class Model>
LayerStackCompute<Model>::LayerStackCompute(const Model& model, model::MicroBatch micro_batch, BatchSource batches,
                                            bool checkpointing)
    : model_(model), mb_(micro_batch), batches_(std::move(batches)), checkpointing_(checkpointing) {
  typename Architecture::BlockSaved sizing;
  sizing.storage.measure_only();
  model_.size_saved(sizing, mb_);
  block_saved_floats_ = sizing.storage.floats();
}

template <class Model>
LayerStackCompute<Model>::~LayerStackCompute() = default;

template <class Model>
typename LayerStackCompute<Model>::Micro& LayerStackCompute<Model>::micro_state(int64_t step, int micro) {
  std::lock_guard lock(mutex_);
  auto& m = micros_[{step, micro}];
  if (!m) {
    m = std::make_unique<Micro>();
    m->inputs.resize(static_cast<size_t>(mb_.tokens()));
    m->targets.resize(static_cast<size_t>(mb_.tokens()));
    batches_(step, micro, m->inputs, m->targets);
    m->x.resize(static_cast<size_t>(model_.layer_count()));
    m->saved.resize(static_cast<size_t>(model_.layer_count()));
  }
  return *m;
}

template <class Model>
int64_t LayerStackCompute<Model>::forward(int64_t step, int micro, int layer, std::span<const float> params,
                                          std::span<float> kept) {
  Micro& m = micro_state(step, micro);
  const auto l = static_cast<size_t>(layer);
  const size_t width = static_cast<size_t>(mb_.tokens() * model_.shape().d_model);
  switch (model_.layer_kind(layer)) {
    case core::LayerKind::kEmbedding: {
      // [output | the flowing gradient | with a tied head, its gradient of
      // the table]. The head reads the table itself from its own fetch
      // (core::TiedHead).
      if (kept.size() != static_cast<size_t>(embedding_kept_floats()))
        throw std::invalid_argument("the embedding keeps " + std::to_string(4 * embedding_kept_floats()) +
                                    " B where its region holds " + std::to_string(4 * kept.size()) + " B");
      m.x[l] = kept.first(width);
      model_.embedding_forward(params, m.inputs, mb_, m.x[l]);
      m.flow = kept.subspan(width, width);
      if constexpr (Architecture::kTiedHead) m.d_tied = kept.subspan(2 * width);
      return bytes_of(kept);
    }
    case core::LayerKind::kBlock: {
      m.x[l] = kept.first(width);
      // Checkpointed, what backward needs is dropped at once (recompute
      // rebuilds it): it is a temporary of the forward, in its scratch.
      model::Temporary dropped(checkpointing_ ? block_saved_floats_ : 0);
      m.saved[l].storage.provide(checkpointing_ ? std::span<float>(dropped.data(), dropped.size())
                                                : kept.subspan(width));
      model_.block_forward(params, m.x[l - 1], mb_, m.saved[l], m.x[l]);
      if (checkpointing_) m.saved[l] = {};  // rebuilt by recompute
      return bytes_of(kept);
    }
    case core::LayerKind::kFinal: {
      m.final_saved.storage.provide(kept);
      float loss = 0;
      if constexpr (Architecture::kTiedHead) {
        loss = model_.final_forward(own_params(layer, params), tied_table(layer, params), m.x[l - 1], m.targets,
                                    mb_, m.final_saved);
      } else {
        loss = model_.final_forward(params, m.x[l - 1], m.targets, mb_, m.final_saved);
      }
      std::lock_guard lock(mutex_);
      losses_[{step, micro}] = loss;
      return bytes_of(kept);
    }
  }
  return 0;
}

template <class Model>
int64_t LayerStackCompute<Model>::recompute(int64_t step, int micro, int layer, std::span<const float> params,
                                            std::span<float> rebuilt) {
  Micro& m = micro_state(step, micro);
  const auto l = static_cast<size_t>(layer);
  if (model_.layer_kind(layer) != core::LayerKind::kBlock) return 0;
  // The output is discarded: the next layer kept its own input.
  model::Temporary out(static_cast<int64_t>(m.x[l].size()));
  m.saved[l].storage.provide(rebuilt);
  model_.block_forward(params, m.x[l - 1], mb_, m.saved[l], {out.data(), out.size()});
  return bytes_of(rebuilt);
}

template <class Model>
void LayerStackCompute<Model>::backward(int64_t step, int micro, int layer, std::span<const float> params,
                                        std::span<float> grads, float loss_scale) {
  Micro& m = micro_state(step, micro);
  const auto l = static_cast<size_t>(layer);
  switch (model_.layer_kind(layer)) {
    case core::LayerKind::kFinal: {
      model::LayerKernels& k = model::layer_kernels();
      k.fill(m.flow.data(), 0.0f, static_cast<int64_t>(m.flow.size()));
      if constexpr (Architecture::kTiedHead) {
        k.fill(m.d_tied.data(), 0.0f, static_cast<int64_t>(m.d_tied.size()));
        model_.final_backward(own_params(layer, params), tied_table(layer, params), m.x[l - 1], m.targets,
                              m.final_saved, loss_scale, m.flow, grads, m.d_tied);
      } else {
        model_.final_backward(params, m.x[l - 1], m.targets, m.final_saved, loss_scale, m.flow, grads);
      }
      m.final_saved = {};
      return;
    }
    case core::LayerKind::kBlock: {
      if (m.saved[l].batch != mb_)
        throw std::logic_error("backward of a block before its forward or recompute");
      model_.block_backward(params, m.x[l - 1], m.saved[l], m.flow, m.flow, grads);
      m.saved[l] = {};
      m.x[l] = {};
      return;
    }
    case core::LayerKind::kEmbedding: {
      model_.embedding_backward(m.inputs, mb_, m.flow, grads);
      if constexpr (Architecture::kTiedHead) {
        std::span<float> table = model_.token_embedding(grads);
        model::layer_kernels().add_into(table.data(), m.d_tied.data(), static_cast<int64_t>(table.size()));
      }
      std::lock_guard lock(mutex_);
      micros_.erase({step, micro});  // the micro-batch is done
      return;
    }
  }
}

template <class Model>
core::ComputeFootprint LayerStackCompute<Model>::footprint(int layer) const {
  // What forward keeps, laid out as forward lays it out.
  const core::Bytes x(4 * mb_.tokens() * model_.shape().d_model);  // the layer's output
  switch (model_.layer_kind(layer)) {
    case core::LayerKind::kEmbedding: {
      const core::Bytes kept(4 * embedding_kept_floats());
      return {.saved = kept, .checkpointed = kept};
    }
    case core::LayerKind::kBlock: {
      typename Architecture::BlockSaved s;
      s.storage.measure_only();
      model_.size_saved(s, mb_);
      return {.saved = x + core::Bytes(4 * s.storage.floats()),
              .checkpointed = x,
              // a checkpointed forward's dropped state, or recompute's discarded output
              .forward_scratch = checkpointing_ ? std::max(x, core::Bytes(4 * block_saved_floats_)) : core::Bytes(0),
              .backward_scratch = core::Bytes(4 * model_.backward_scratch_floats(core::LayerKind::kBlock, mb_))};
    }
    case core::LayerKind::kFinal: {
      typename Architecture::FinalSaved s;
      s.storage.measure_only();
      model_.size_saved(s, mb_);
      const core::Bytes kept(4 * s.storage.floats());
      return {.saved = kept,
              .checkpointed = kept,
              .backward_scratch = core::Bytes(4 * model_.backward_scratch_floats(core::LayerKind::kFinal, mb_))};
    }
  }
  return {};
}

template <class Model>
double LayerStackCompute<Model>::loss(int64_t step, int micro) const {
  std::lock_guard lock(mutex_);
  auto it = losses_.find({step, micro});
  return it == losses_.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

template <class Model>
double LayerStackCompute<Model>::evaluate(const std::vector<std::vector<float>>& params,
                                          std::span<const int32_t> inputs, std::span<const int32_t> targets) const {
  const size_t width = static_cast<size_t>(mb_.tokens() * model_.shape().d_model);
  std::vector<float> x(width), y(width);
  model_.embedding_forward(params[0], inputs, mb_, x);
  typename Architecture::BlockSaved saved;
  const int last = model_.layer_count() - 1;
  for (int l = 1; l < last; ++l) {
    model_.block_forward(params[static_cast<size_t>(l)], x, mb_, saved, y);
    std::swap(x, y);
  }
  typename Architecture::FinalSaved final_saved;
  if constexpr (Architecture::kTiedHead) {
    return model_.final_forward(params[static_cast<size_t>(last)], model_.token_embedding(params[0]), x, targets,
                                mb_, final_saved);
  } else {
    return model_.final_forward(params[static_cast<size_t>(last)], x, targets, mb_, final_saved);
  }
}

template class LayerStackCompute<model::GptModel>;
template class LayerStackCompute<model::LlamaModel>;

}  // namespace stowage::executor
