// Every operation against the float64 reference over reductions, weight / pos_weight variants, dtypes,
// broadcast shapes, gradOutput shapes and strided layouts (each scenario is one registered test).
#include <string>
#include <vector>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::Dtypes;
using test::Layout;
using test::Operation;
using test::Scenario;
using test::Shape;

const Shape kSelfShape = {2, 3, 4, 3};  // (B, C, H, W) with W == C, so that (C,) aligns
const Shape kWeightShape = {4, 1};
const Shape kPosWeightShape = {3};

struct NamedDtypes {
  const char *name;
  Dtypes dtypes;
};

const NamedDtypes kDtypeSets[] = {
    {"f32", {ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT}},
    {"f16", {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16}},
    {"bf16", {ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16}},
    {"mixed", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_BF16, ACL_FLOAT16}},
};

bool NeedsWeight(Operation op) { return op == Operation::kGradWeight; }
bool NeedsPosWeight(Operation op) { return op == Operation::kGradPosWeight; }

void Register(Operation op, const Scenario &scenario) {
  test::RegisterTest("scenario " + test::Describe(op, scenario),
                     [op, scenario] { test::ExpectScenarioMatchesReference(op, scenario); });
}

// reduction x (weight, pos_weight present or not) x dtype set, for every operation.
bool RegisterVariantsAndDtypes() {
  uint64_t seed = 100;
  for (Operation op : test::kSingleOutputOperations) {
    for (int64_t reduction : {0, 1, 2}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool has_weight = (variant & 1) != 0;
        const bool has_pos_weight = (variant & 2) != 0;
        if ((NeedsWeight(op) && !has_weight) || (NeedsPosWeight(op) && !has_pos_weight)) {
          continue;
        }
        for (const NamedDtypes &set : kDtypeSets) {
          Scenario scenario;
          scenario.shape = kSelfShape;
          if (has_weight) {
            scenario.w_shape = kWeightShape;
          }
          if (has_pos_weight) {
            scenario.p_shape = kPosWeightShape;
          }
          scenario.reduction = reduction;
          scenario.dtypes = set.dtypes;
          scenario.seed = seed++;
          Register(op, scenario);
        }
      }
    }
  }
  return true;
}

// weight and pos_weight shapes (C,), (1,C), (N,1), (C,1,1), (1,), [] and the full shape, on (B,C,H,W).
bool RegisterBroadcastShapes() {
  const std::vector<Shape> shapes = {{3}, {1, 3}, {4, 1}, {3, 1, 1}, {1}, {}, kSelfShape};
  uint64_t seed = 500;
  for (Operation op : test::kSingleOutputOperations) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      Scenario scenario;
      scenario.shape = kSelfShape;
      scenario.w_shape = shapes[i];
      scenario.p_shape = shapes[(i + 3) % shapes.size()];
      scenario.reduction = static_cast<int64_t>(i % 3);
      scenario.seed = seed++;
      Register(op, scenario);
    }
  }
  return true;
}

// Non-contiguous views for every input and the output: a transposed layout, and an offset with row gaps.
bool RegisterLayouts() {
  uint64_t seed = 700;
  for (Operation op : test::kSingleOutputOperations) {
    for (Layout layout : {Layout::kColumnMajor, Layout::kPadded}) {
      for (int64_t reduction : {0, 1, 2}) {
        Scenario scenario;
        scenario.shape = {5, 6};
        scenario.w_shape = Shape{6};
        scenario.p_shape = Shape{5, 1};
        scenario.reduction = reduction;
        scenario.dtypes = kDtypeSets[reduction == 2 ? 3 : 0].dtypes;
        scenario.layout = layout;
        scenario.seed = seed++;
        Register(op, scenario);
      }
    }
  }
  return true;
}

// gradOutput that broadcasts: (H, 1)-like with none, [1] with mean and sum.
bool RegisterGradOutputShapes() {
  uint64_t seed = 900;
  for (Operation op :
       {Operation::kGradSelf, Operation::kGradTarget, Operation::kGradWeight, Operation::kGradPosWeight}) {
    for (int64_t reduction : {0, 1, 2}) {
      Scenario scenario;
      scenario.shape = kSelfShape;
      scenario.w_shape = Shape{3, 1, 1};
      scenario.p_shape = Shape{1, 3};
      scenario.g_shape = reduction == 0 ? Shape{4, 1} : Shape{1};
      scenario.reduction = reduction;
      scenario.seed = seed++;
      Register(op, scenario);
    }
  }
  return true;
}

// Reductions spanning several 8192-element blocks (a workspace of block partials) and many outputs.
bool RegisterMultiBlockReductions() {
  uint64_t seed = 1100;
  for (Operation op : test::kSingleOutputOperations) {
    Scenario scenario;
    scenario.shape = {3, 7, 1000};
    scenario.w_shape = op == Operation::kGradWeight ? Shape{1} : Shape{7, 1};
    scenario.p_shape = op == Operation::kGradPosWeight ? Shape{1000} : Shape{1};
    scenario.reduction = op == Operation::kForward ? 1 : 2;
    scenario.dtypes = kDtypeSets[1].dtypes;
    scenario.seed = seed++;
    Register(op, scenario);
  }
  return true;
}

const bool kRegistered = RegisterVariantsAndDtypes() && RegisterBroadcastShapes() && RegisterLayouts() &&
                         RegisterGradOutputShapes() && RegisterMultiBlockReductions();

}  // namespace
