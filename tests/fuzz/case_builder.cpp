#include "case_builder.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

namespace fuzz {
namespace {

constexpr int64_t kSmallNumel = 2048;
constexpr int64_t kMaxStorageElements = int64_t{1} << 20;
constexpr int kRunModes = static_cast<int>(RunMode::kForgedStream) + 1;

const char *RunModeName(RunMode mode) {
  static const char *const kNames[kRunModes] = {
      "run",           "run-twice",        "destroy-then-run", "null-executor",        "forged-executor",
      "other-ops-run", "null-workspace",   "short-workspace",  "misaligned-workspace", "larger-workspace",
      "live-stream",   "destroyed-stream", "forged-stream"};
  return kNames[static_cast<int>(mode)];
}

std::string DescriptorText(const Descriptor &d) {
  std::string text = (d.null_dims ? "null:" : "") + test::ShapeText(d.dims);
  text += " strides=" + (d.strides ? test::ShapeText(*d.strides) : std::string("null"));
  text += " offset=" + std::to_string(d.offset) + " dtype=" + std::to_string(d.dtype);
  text += d.format == ACL_FORMAT_ND ? "" : " format=" + std::to_string(d.format);
  text += " storage=" + std::string(d.null_storage_dims ? "null:" : "") + test::ShapeText(d.storage_dims);
  return text + (d.null_data ? " data=null" : "");
}

}  // namespace

std::string Describe(const Case &c) {
  std::string text =
      std::string(ApiOf(c.op).name) + " reduction=" + std::to_string(c.reduction) + " run=" + RunModeName(c.run_mode);
  for (Role role : RolesOf(c.op)) {
    text += std::string("\n    ") + kRoleNames[role] + ": " +
            (c.tensors[role] ? DescriptorText(*c.tensors[role]) : std::string("nullptr"));
  }
  for (Role output : OutputRoles(c.op)) {
    if (c.storage_of[output] != output) {
      text += std::string("\n    ") + kRoleNames[output] + " is a view of the storage of " +
              kRoleNames[c.storage_of[output]];
    }
  }
  const std::pair<bool, const char *> flags[] = {{c.null_workspace_size, "null-workspaceSize"},
                                                 {c.null_executor, "null-executor-pointer"},
                                                 {c.destroy_tensors_before_run, "tensors-destroyed-before-run"},
                                                 {c.device_workspace, "aclrtMalloc-workspace"},
                                                 {c.check_accessors, "accessors"},
                                                 {c.destroy_twice, "destroy-twice"},
                                                 {c.non_finite_inputs, "non-finite"}};
  for (const auto &[set, name] : flags) {
    text += set ? std::string(" ") + name : "";
  }
  return text;
}

bool IsRequired(Operation op, Role role) {
  switch (role) {
    case kGrad:
      return TakesGradOutput(op);
    case kWeight:
      return op == Operation::kGradWeight;
    case kPosWeight:
      return op == Operation::kGradPosWeight;
    default:
      return true;
  }
}

std::vector<Role> OutputRoles(Operation op) {
  switch (op) {
    case Operation::kGradAll:
      return {kOut, kGradTargetOut, kGradWeightOut, kGradPosWeightOut};
    case Operation::kLossAndAllGradients:
      return {kLossOut, kOut, kGradTargetOut, kGradWeightOut, kGradPosWeightOut};
    default:
      return {kOut};
  }
}

std::vector<Role> RolesOf(Operation op) {
  std::vector<Role> roles(std::begin(kInputRoles), std::end(kInputRoles));
  if (!TakesGradOutput(op)) {
    roles.erase(roles.begin());  // no gradOutput
  }
  const std::vector<Role> outputs = OutputRoles(op);
  roles.insert(roles.end(), outputs.begin(), outputs.end());
  return roles;
}

Operation SingleOutputOp(Operation op, Role output) {
  if (!IsFused(op)) {
    return op;
  }
  switch (output) {
    case kOut:
      return Operation::kGradSelf;
    case kGradTargetOut:
      return Operation::kGradTarget;
    case kGradWeightOut:
      return Operation::kGradWeight;
    case kLossOut:
      return Operation::kForward;
    default:
      return Operation::kGradPosWeight;
  }
}

Role OwnerOf(Operation op, Role output) {
  switch (SingleOutputOp(op, output)) {
    case Operation::kGradSelf:
      return kSelf;
    case Operation::kGradWeight:
      return kWeight;
    case Operation::kGradPosWeight:
      return kPosWeight;
    default:
      return kTarget;
  }
}

namespace {

// The builder keeps the draws of the five single-output operations' cases as they were before the fused gradients,
// and kGradAll's as they were before kLossAndAllGradients: what only the fused operations have (kGradTargetOut; the
// weight gradients of kGradAll and kLossAndAllGradients, their tall shapes and the weight gradients missing or given on
// purpose; the loss of kLossAndAllGradients) draws nothing for the others.
class CaseBuilder {
 public:
  explicit CaseBuilder(uint64_t seed) : random_(seed) {}

  Case Build(std::optional<Operation> op) {
    c_.op = op ? *op : static_cast<Operation>(random_.Between(0, kSingleOutputOpCount - 1));
    c_.reduction =
        random_.Chance(0.94) ? random_.Between(0, 2) : random_.Pick<int64_t>({-1, 3, 4, 100, INT64_MIN, INT64_MAX});
    const bool huge = random_.Chance(0.005);
    ChooseShapes(huge);
    ChooseDtypes();
    BreakShapesAndDtypes();
    for (int role = 0; role < kRoles; ++role) {
      if (present_[role]) {
        c_.tensors[role] = LaidOut(shapes_[role], dtypes_[role], huge);
      }
    }
    BreakDescriptors();
    const std::vector<Role> outputs = OutputRoles(c_.op);
    for (Role output : outputs) {
      if (c_.tensors[output] && random_.Chance(output == outputs.front() ? 0.04 : 0.1)) {
        AliasOutput(output);
      }
    }
    ChoosePhases();
    return c_;
  }

 private:
  // ---- shapes and dtypes ----

  int64_t SmallDim() {
    if (random_.Chance(0.03)) {
      return 0;
    }
    return random_.Chance(0.3) ? 1 : random_.Between(2, 7);
  }

  Shape SmallShape() {
    const int rank = random_.Chance(0.03) ? static_cast<int>(random_.Between(9, 12))
                                          : random_.Pick({0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 7, 8});
    Shape shape(rank);
    for (int64_t &dim : shape) {
      dim = SmallDim();
    }
    while (test::NumelOf(shape) > kSmallNumel) {
      shape[random_.Between(0, rank - 1)] = 1;
    }
    return shape;
  }

  // 1 to 3 dims with about `numel` elements: the multi-block (> 8192) and multi-thread (>= 65536) paths.
  Shape ShapeOfAbout(int64_t numel) {
    const int64_t rows = random_.Between(2, 9);
    const int64_t columns = random_.Between(2, 5);
    switch (random_.Between(0, 2)) {
      case 0:
        return {numel};
      case 1:
        return {rows, numel / rows};
      default:
        return {rows, numel / (rows * columns), columns};
    }
  }

  // 8193 to 24576 rows (two or three reduction blocks) of 2-6 classes, about 45 % of them beyond the thread pool's
  // 65536 elements: the gradient of a per-class weight, (classes) or (1, classes), then needs a workspace, and
  // kGradAll and kLossAndAllGradients sum it within their pass over dx and dy. ShapeOfAbout's rows are too few for
  // that.
  Shape TallShape() {
    tall_ = true;
    const int64_t classes = random_.Between(2, 6);
    const int64_t rows = random_.Between(8193, 3 * 8192);
    if (random_.Chance(0.5)) {
      return {rows, classes};
    }
    const int64_t leading = random_.Between(2, 3);
    return {leading, rows / leading + 1, classes};
  }

  Shape PerClassOf(const Shape &self) { return random_.Chance(0.5) ? Shape{self.back()} : Shape{1, self.back()}; }

  Shape SelfShape(bool huge) {
    if (huge) {  // a broadcast (stride 0) view of more elements than can be run, or than int32 counts
      return {random_.Pick<int64_t>({(int64_t{1} << 31) + 1, int64_t{1} << 33, int64_t{1} << 40})};
    }
    if (IsFused(c_.op) && random_.Chance(0.15)) {
      return TallShape();
    }
    if (random_.Chance(0.005)) {
      return ShapeOfAbout(random_.Between(65536, 150000));
    }
    if (random_.Chance(0.08)) {
      return ShapeOfAbout(random_.Between(8193, 20000));
    }
    return SmallShape();
  }

  // numpy broadcasting without enlarging: trailing dims of `to`, each kept or 1.
  Shape BroadcastableTo(const Shape &to) {
    const size_t rank = static_cast<size_t>(random_.Between(0, static_cast<int64_t>(to.size())));
    Shape shape(to.end() - rank, to.end());
    for (int64_t &dim : shape) {
      dim = random_.Chance(0.4) ? 1 : dim;
    }
    return shape;
  }

  // One dim neither 1 nor `to`'s, or one dim more than `to` (even a leading 1 enlarges).
  Shape NotBroadcastableTo(const Shape &to) {
    Shape shape = to;
    if (to.empty() || random_.Chance(0.3)) {
      shape.insert(shape.begin(), random_.Between(1, 3));
      return shape;
    }
    const size_t dim = static_cast<size_t>(random_.Between(0, static_cast<int64_t>(to.size()) - 1));
    shape[dim] = to[dim] + (to[dim] == 0 ? 2 : 1);
    return shape;
  }

  Shape DifferentFrom(const Shape &shape) {
    Shape different = shape;
    if (shape.empty() || random_.Chance(0.3)) {
      different.push_back(random_.Between(2, 3));
    } else {
      different[static_cast<size_t>(random_.Between(0, static_cast<int64_t>(shape.size()) - 1))] += 1;
    }
    return different;
  }

  // The forward's out: target's shape for none, else [] or [1].
  Shape LossShape() {
    if (c_.reduction == 0) {
      return shapes_[kTarget];
    }
    return random_.Chance(0.7) ? Shape{} : Shape{1};
  }

  Shape OutputShape() {
    switch (c_.op) {
      case Operation::kForward:
        return LossShape();
      case Operation::kGradWeight:
        return shapes_[kWeight];
      case Operation::kGradPosWeight:
        return shapes_[kPosWeight];
      default:
        return shapes_[kSelf];
    }
  }

  void ChooseShapes(bool huge) {
    const Shape self = SelfShape(huge);
    shapes_[kSelf] = self;
    shapes_[kTarget] = self;
    shapes_[kWeight] = BroadcastableTo(self);
    shapes_[kPosWeight] = BroadcastableTo(self);
    for (Role role : {kWeight, kPosWeight}) {
      if (tall_ && random_.Chance(0.5)) {
        shapes_[role] = PerClassOf(self);
      }
    }
    const bool reduced = c_.reduction == 1 || c_.reduction == 2;
    shapes_[kGrad] = random_.Chance(0.7) ? (reduced ? Shape{} : self) : BroadcastableTo(self);
    shapes_[kGradTargetOut] = self;
    shapes_[kGradWeightOut] = shapes_[kWeight];
    shapes_[kGradPosWeightOut] = shapes_[kPosWeight];
    present_.fill(true);
    present_[kGrad] = TakesGradOutput(c_.op);
    present_[kGradTargetOut] = IsFused(c_.op);
    present_[kWeight] = c_.op == Operation::kGradWeight || random_.Chance(0.6);
    present_[kPosWeight] = c_.op == Operation::kGradPosWeight || random_.Chance(0.6);
    present_[kGradWeightOut] = IsFused(c_.op) && present_[kWeight];
    present_[kGradPosWeightOut] = IsFused(c_.op) && present_[kPosWeight];
    present_[kLossOut] = c_.op == Operation::kLossAndAllGradients;
    shapes_[kOut] = OutputShape();
    if (present_[kLossOut]) {
      shapes_[kLossOut] = LossShape();
    }
  }

  void ChooseDtypes() {
    for (int role = 0; role <= kOut; ++role) {
      dtypes_[role] = random_.Pick<int32_t>({ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
    }
    for (Role output : OutputRoles(c_.op)) {
      dtypes_[output] = dtypes_[OwnerOf(c_.op, output)];
    }
  }

  int32_t UnsupportedDtype() {
    return random_.Pick<int32_t>({ACL_DT_UNDEFINED,
                                  ACL_INT8,
                                  ACL_INT32,
                                  ACL_UINT8,
                                  ACL_INT16,
                                  ACL_UINT16,
                                  ACL_UINT32,
                                  ACL_INT64,
                                  ACL_UINT64,
                                  ACL_DOUBLE,
                                  ACL_BOOL,
                                  ACL_STRING,
                                  ACL_COMPLEX64,
                                  ACL_COMPLEX128,
                                  ACL_INT4,
                                  ACL_UINT1,
                                  ACL_COMPLEX32,
                                  ACL_HIFLOAT8,
                                  ACL_FLOAT8_E5M2,
                                  ACL_FLOAT8_E4M3FN,
                                  ACL_FLOAT8_E8M0,
                                  ACL_FLOAT6_E3M2,
                                  ACL_FLOAT6_E2M3,
                                  ACL_FLOAT4_E2M1,
                                  ACL_FLOAT4_E1M2,
                                  5,
                                  14,
                                  15,
                                  26,
                                  28,
                                  99,
                                  -7,
                                  INT32_MIN,
                                  INT32_MAX});
  }

  // The highest role of op; those below it that op lacks (the forward's kGrad) are drawn all the same.
  Role HighestRole() const {
    const std::vector<Role> outputs = OutputRoles(c_.op);
    return *std::max_element(outputs.begin(), outputs.end());
  }

  Role AnyRole() { return static_cast<Role>(random_.Between(0, HighestRole())); }

  void PadRank(Role role) {
    const size_t rank = static_cast<size_t>(random_.Between(9, 12));
    Shape &shape = shapes_[role];
    shape.insert(shape.begin(), rank - std::min(rank, shape.size()), 1);
  }

  // Shapes, dtypes and presence that make the call invalid (or valid in a rarely taken way).
  void BreakShapesAndDtypes() {
    BreakShapes();
    BreakDtypes();
    DropArguments();
    if (IsFused(c_.op)) {
      MismatchWeightGradients();
    }
  }

  void BreakShapes() {
    if (random_.Chance(0.03)) {
      shapes_[kTarget] = DifferentFrom(shapes_[kSelf]);
    }
    for (Role role : {kWeight, kPosWeight, kGrad}) {
      if (random_.Chance(0.03)) {
        shapes_[role] = NotBroadcastableTo(shapes_[kSelf]);
      }
    }
    for (Role output : OutputRoles(c_.op)) {
      if (random_.Chance(0.03)) {
        shapes_[output] = DifferentFrom(shapes_[output]);
      }
    }
    if (random_.Chance(0.02)) {  // self and target alike, so that only the rank is wrong
      PadRank(kSelf);
      shapes_[kTarget] = shapes_[kSelf];
    }
    if (random_.Chance(0.02)) {
      PadRank(AnyRole());
    }
  }

  void BreakDtypes() {
    for (Role output : OutputRoles(c_.op)) {
      if (random_.Chance(0.03)) {
        dtypes_[output] = random_.Pick<int32_t>({ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
      }
    }
    if (random_.Chance(0.04)) {
      dtypes_[AnyRole()] = UnsupportedDtype();
    }
  }

  // Arguments passed as nullptr.
  void DropArguments() {
    // kGradAll draws as before kLossOut (its highest role is kGradPosWeightOut), the others as before kGradAll
    const int drawn_roles = IsFused(c_.op) ? HighestRole() + 1 : kGradWeightOut;
    for (int role = 0; role < drawn_roles; ++role) {
      present_[role] = present_[role] && !random_.Chance(0.025);
    }
  }

  // A weight gradient given without its input (161002) or missing with it (161001), on purpose.
  void MismatchWeightGradients() {
    for (Role gradient : {kGradWeightOut, kGradPosWeightOut}) {
      if (random_.Chance(0.03)) {
        present_[gradient] = !present_[OwnerOf(c_.op, gradient)];
      }
    }
  }

  // ---- descriptors ----

  Shape Contiguous(const Shape &dims, const std::vector<size_t> &order, const Shape &padding) {
    Shape strides(dims.size(), 0);
    int64_t stride = 1;
    for (size_t k = order.size(); k-- > 0;) {
      strides[order[k]] = stride;
      stride *= std::max<int64_t>(dims[order[k]], 1) + padding[order[k]];
    }
    return strides;
  }

  static std::vector<size_t> RowMajor(size_t rank) {
    std::vector<size_t> order(rank);
    std::iota(order.begin(), order.end(), 0);
    return order;
  }

  Shape Contiguous(const Shape &dims) { return Contiguous(dims, RowMajor(dims.size()), Shape(dims.size(), 0)); }

  // A transposed view.
  Shape Permuted(const Shape &dims) {
    std::vector<size_t> order = RowMajor(dims.size());
    std::shuffle(order.begin(), order.end(), std::mt19937_64(random_.Bits()));
    return Contiguous(dims, order, Shape(dims.size(), 0));
  }

  Shape WithRowGaps(const Shape &dims) {
    Shape padding(dims.size(), 0);
    for (int64_t &pad : padding) {
      pad = random_.Between(0, 2);
    }
    return Contiguous(dims, RowMajor(dims.size()), padding);
  }

  // Stride 0 on some dims: an input that repeats elements, or an output that overlaps itself.
  Shape WithSomeZeroStrides(const Shape &dims) {
    Shape strides = Contiguous(dims);
    for (int64_t &stride : strides) {
      stride = random_.Chance(0.3) ? 0 : stride;
    }
    return strides;
  }

  // The strides of size-1 dims never matter.
  Shape WithAnyStridesOfSizeOneDims(const Shape &dims) {
    Shape strides = Contiguous(dims);
    for (size_t dim = 0; dim < dims.size(); ++dim) {
      if (dims[dim] == 1) {
        strides[dim] = random_.Pick<int64_t>({0, 7, int64_t{1} << 40, INT64_MAX});
      }
    }
    return strides;
  }

  std::optional<Shape> Strides(const Shape &dims, bool huge) {
    if (huge) {
      return Shape(dims.size(), 0);
    }
    switch (random_.Between(0, 7)) {
      case 0:
      case 1:
        return std::nullopt;
      case 2:
        return Permuted(dims);
      case 3:
        return WithRowGaps(dims);
      case 4:
        return WithSomeZeroStrides(dims);
      case 5:
        return WithAnyStridesOfSizeOneDims(dims);
      default:
        return Contiguous(dims);
    }
  }

  Descriptor LaidOut(const Shape &dims, int32_t dtype, bool huge) {
    Descriptor d;
    d.dims = dims;
    d.dtype = dtype;
    d.strides = Strides(dims, huge);
    d.offset = random_.Chance(0.6) ? 0 : random_.Chance(0.9) ? random_.Between(1, 7) : random_.Between(8, 1000);
    if (random_.Chance(0.05)) {
      d.format = random_.Pick<int32_t>({ACL_FORMAT_UNDEFINED, ACL_FORMAT_NCHW, ACL_FORMAT_NHWC, ACL_FORMAT_NC1HWC0,
                                        ACL_FORMAT_FRACTAL_NZ, ACL_FORMAT_NCL, 63, 64, -65, INT32_MAX});
    }
    return d;
  }

  enum class Breakage {
    kNegativeDim,
    kHugeDim,
    kHugeStride,
    kNegativeStride,
    kNegativeOffset,
    kHugeOffset,
    kEmptyWithHugeDims,
    kTooManyDims,
    kNullDims,
    kNullData,
    kStorageTooSmall,
    kNullStorageDims,
    kNegativeStorageDim,
  };

  void ExplicitStrides(Descriptor *d) {
    if (!d->strides) {
      d->strides = EffectiveStrides(*d).value_or(Shape(d->dims.size(), 1));
    }
  }

  static bool ChangesADim(Breakage breakage) {
    return breakage == Breakage::kNegativeDim || breakage == Breakage::kHugeDim || breakage == Breakage::kHugeStride ||
           breakage == Breakage::kNegativeStride;
  }

  void BreakView(Descriptor *d, Breakage breakage) {
    if (d->dims.empty() && ChangesADim(breakage)) {
      d->dims = {2};
      d->strides.reset();
    }
    // Drawn for every breakage, so that the later draws of a seed stay the same.
    const size_t dim = static_cast<size_t>(random_.Between(0, static_cast<int64_t>(d->dims.size()) - 1));
    if (ChangesADim(breakage)) {
      BreakDim(d, dim, breakage);
    } else {
      BreakWholeView(d, breakage);
    }
  }

  void BreakDim(Descriptor *d, size_t dim, Breakage breakage) {
    switch (breakage) {
      case Breakage::kNegativeDim:
        d->dims[dim] = -random_.Between(1, 3);
        break;
      case Breakage::kHugeDim:
        d->dims[dim] = random_.Pick<int64_t>({(int64_t{1} << 31) + 1, int64_t{1} << 40, INT64_MAX});
        if (d->strides && random_.Chance(0.5)) {
          (*d->strides)[dim] = 0;
        }
        break;
      case Breakage::kHugeStride:
        ExplicitStrides(d);
        (*d->strides)[dim] = random_.Pick<int64_t>({int64_t{1} << 40, int64_t{1} << 62, INT64_MAX});
        break;
      default:  // kNegativeStride
        ExplicitStrides(d);
        (*d->strides)[dim] = -random_.Between(1, 4);
        break;
    }
  }

  // The breakages of the storage are made once it is sized (BreakDescriptors).
  void BreakWholeView(Descriptor *d, Breakage breakage) {
    switch (breakage) {
      case Breakage::kNegativeOffset:
        d->offset = -random_.Pick<int64_t>({1, int64_t{1} << 40, INT64_MAX});
        break;
      case Breakage::kHugeOffset:
        d->offset = random_.Pick<int64_t>({int64_t{1} << 40, INT64_MAX - 2, INT64_MAX});
        break;
      case Breakage::kEmptyWithHugeDims:  // no elements, but contiguous strides beyond int64
        d->dims = {0, int64_t{1} << 40, int64_t{1} << 40};
        d->strides.reset();
        break;
      case Breakage::kTooManyDims:
        d->dims.insert(d->dims.begin(), random_.Between(65, 70) - d->dims.size(), 1);
        d->strides.reset();
        break;
      case Breakage::kNullDims:
        d->null_dims = true;
        break;
      case Breakage::kNullData:
        d->null_data = true;
        break;
      default:
        break;
    }
  }

  // The storage the view needs (a small one where it needs more than can be allocated), plus some slack.
  int64_t StorageElements(const Descriptor &d, bool too_small) {
    const bool empty = std::find(d.dims.begin(), d.dims.end(), 0) != d.dims.end();
    const std::optional<int64_t> needed = empty ? std::optional<int64_t>(0) : StorageNeeded(d);
    if (!needed || *needed > kMaxStorageElements) {
      return random_.Between(1, 16);
    }
    if (too_small && *needed > 0) {
      return *needed - 1;
    }
    return *needed + (random_.Chance(0.5) ? 0 : random_.Between(1, 4));
  }

  Shape StorageDims(int64_t elements) {
    if (elements == 1 && random_.Chance(0.3)) {
      return {};
    }
    if (elements % 2 == 0 && elements > 0 && random_.Chance(0.3)) {
      return {2, elements / 2};
    }
    return {elements};
  }

  void SizeStorage(Role role, bool too_small) {
    Descriptor &d = *c_.tensors[role];
    const int64_t elements = StorageElements(d, too_small);
    d.storage_dims = StorageDims(elements);
    c_.storage_bytes[role] = static_cast<size_t>(elements) * ElementBytes(d.dtype);
  }

  void BreakDescriptors() {
    std::optional<Role> broken;
    Breakage breakage = Breakage::kNullData;
    if (random_.Chance(0.1)) {
      broken = AnyRole();
      breakage = static_cast<Breakage>(random_.Between(0, static_cast<int64_t>(Breakage::kNegativeStorageDim)));
      if (!c_.tensors[*broken]) {
        broken.reset();
      }
    }
    if (broken) {
      BreakView(&*c_.tensors[*broken], breakage);
    }
    for (int role = 0; role < kRoles; ++role) {
      if (c_.tensors[role]) {
        SizeStorage(static_cast<Role>(role), broken == role && breakage == Breakage::kStorageTooSmall);
      }
    }
    if (broken == std::nullopt) {
      return;
    }
    Descriptor &d = *c_.tensors[*broken];
    if (breakage == Breakage::kNullStorageDims) {
      d.null_storage_dims = true;
    } else if (breakage == Breakage::kNegativeStorageDim) {
      d.storage_dims.push_back(-random_.Between(1, 2));
    }
  }

  // An output as a view of the storage of an argument before it in the C signature (an input, or another output's)
  // with the same shape: exactly that argument's view, or shifted by one element.
  void AliasOutput(Role output) {
    std::vector<Role> donors;
    for (Role role : RolesOf(c_.op)) {
      if (role == output) {
        break;
      }
      if (c_.tensors[role] && c_.tensors[role]->dims == c_.tensors[output]->dims) {
        donors.push_back(role);
      }
    }
    if (donors.empty()) {
      return;
    }
    const Role donor = donors[static_cast<size_t>(random_.Between(0, static_cast<int64_t>(donors.size()) - 1))];
    const Role storage = c_.storage_of[donor];
    Descriptor &out = *c_.tensors[output];
    const Descriptor &other = *c_.tensors[donor];
    out.strides = other.strides;
    const int64_t shift = random_.Between(0, 1);  // drawn always, so that every later draw of a seed stays the same
    out.offset = other.offset <= INT64_MAX - shift ? other.offset + shift : other.offset;  // a broken huge offset
    out.storage_dims = {static_cast<int64_t>(c_.storage_bytes[storage] / ElementBytes(out.dtype))};
    c_.storage_of[output] = storage;
  }

  void ChoosePhases() {
    c_.null_workspace_size = random_.Chance(0.015);
    c_.null_executor = random_.Chance(0.015);
    c_.destroy_tensors_before_run = random_.Chance(0.1);
    c_.device_workspace = random_.Chance(0.2);
    c_.check_accessors = random_.Chance(0.05);
    c_.destroy_twice = random_.Chance(0.03);
    c_.non_finite_inputs = random_.Chance(0.03);
    c_.run_mode = random_.Chance(0.7) ? RunMode::kRun : static_cast<RunMode>(random_.Between(1, kRunModes - 1));
  }

  Random random_;
  Case c_;
  std::array<Shape, kRoles> shapes_;
  std::array<int32_t, kRoles> dtypes_ = {};
  std::array<bool, kRoles> present_ = {};
  bool tall_ = false;  // self is a TallShape
};

}  // namespace

Case BuildCase(uint64_t seed, std::optional<Operation> op) { return CaseBuilder(seed).Build(op); }

}  // namespace fuzz
