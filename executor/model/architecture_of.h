// What differs between the decoders of executor/model/ where code drives
// either one (the executor's LayerStackCompute, the tests' whole model):
// the types their layers keep between forward and backward, and whether
// the head is tied to the embedding (the GPT's final layer then computes
// with, and adds a gradient to, the embedding layer's token table).
#pragma once

#include "executor/model/gpt_model.h"
#include "executor/model/llama_model.h"

namespace stowage::executor::model {

template <class Model>
struct ArchitectureOf;

template <>
struct ArchitectureOf<GptModel> {
  using BlockSaved = model::BlockSaved;
  using FinalSaved = model::FinalSaved;
  static constexpr bool kTiedHead = true;
};

template <>
struct ArchitectureOf<LlamaModel> {
  using BlockSaved = LlamaBlockSaved;
  using FinalSaved = LlamaFinalSaved;
  static constexpr bool kTiedHead = false;
};

}  // namespace stowage::executor::model
