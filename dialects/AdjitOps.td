//===- AdjitOps.td - adjit operations -----------------------*- tablegen -*-===//

#ifndef ADJIT_OPS_TD
#define ADJIT_OPS_TD

include "AdjitDialect.td"
include "AdjitTypes.td"
include "ArrayAccessInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

/// `!llvm.ptr`: the runtime-provided error record of a launch.
def Adjit_LLVMPointer : Type<CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
                             "LLVM pointer", "::mlir::LLVM::LLVMPointerType">,
                        BuildableType<"::mlir::LLVM::LLVMPointerType::get($_builder.getContext())">;

//===----------------------------------------------------------------------===//
// Thread index
//===----------------------------------------------------------------------===//

def Adjit_TidOp : Adjit_Op<"tid", [Pure]> {
  let summary = "the calling thread's index in the launch grid";
  let description = [{
    Only valid in a kernel. Returns the thread index as 1 to 4 coordinates. With one result it is the
    linear index over the whole launch; with N results the linear index is
    delinearized over the last N-1 launch extents (the first coordinate is
    the slowest), as `i, j = wp.tid()` in Warp.

    ```mlir
    %i = adjit.tid : index
    %i, %j = adjit.tid : index, index
    ```
  }];
  let results = (outs Variadic<Index>:$indices);
  let assemblyFormat = "attr-dict `:` type($indices)";
  let hasVerifier = 1;
}

def Adjit_TidBoundsOp : Adjit_Op<"tid_bounds", [Pure]> {
  let summary = "the exclusive upper bounds of the thread coordinates";
  let description = [{
    Only valid in a kernel. Result k bounds result k of an `adjit.tid` with
    as many results: every thread of the launch has `0 <= tid[k] < bound[k]`.
    The same for every thread, so conditions on it are decided once per
    launch (adjit-access-checks uses it to prove thread-indexed accesses).

    ```mlir
    %ni, %nj = adjit.tid_bounds : index, index
    ```
  }];
  let results = (outs Variadic<Index>:$bounds);
  let assemblyFormat = "attr-dict `:` type($bounds)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Runtime checks (adjit-access-checks)
//===----------------------------------------------------------------------===//

def Adjit_ErrorRecordOp : Adjit_Op<"error_record", [Pure]> {
  let summary = "the launch's error record";
  let description = [{
    Only valid in a kernel. A pointer to the record where the first failed
    check of a launch is written (see `adjit.access_error`); the launch passes
    make it a parameter the runtime provides and reads after the launch.

    ```mlir
    %record = adjit.error_record : !llvm.ptr
    ```
  }];
  let results = (outs Adjit_LLVMPointer:$record);
  let assemblyFormat = "attr-dict `:` type($record)";
  let hasVerifier = 1;
}

def Adjit_AccessErrorOp : Adjit_Op<"access_error", [AttrSizedOperandSegments]> {
  let summary = "records a failed check of an array access";
  let description = [{
    Writes the failed access (an index out of range, or a non-finite value
    stored; the site says which) into the launch's error record unless an
    earlier failure is there (first failure wins, atomically): the record's
    failure words (cpp/runtime/ErrorRecord.h numbers them) are `[site + 1,
    thread, index[0..3], size[0..3]]`, the first zero while nothing failed.
    `site` indexes the kernel's
    `adjit.check_sites`; `thread` is the linear thread index.

    ```mlir
    adjit.access_error %record, %thread site 2 [%i] of [%n]
    ```
  }];
  let arguments = (ins Adjit_LLVMPointer:$record, Index:$thread, I64Attr:$site,
                       Variadic<Index>:$indices, Variadic<Index>:$sizes);
  let assemblyFormat = [{
    $record `,` $thread `site` $site `[` $indices `]` `of` `[` $sizes `]` attr-dict
  }];
  let hasVerifier = 1;
}

def Adjit_CheckIndexOp : Adjit_Op<"check_index"> {
  let summary = "a runtime index into a vector or matrix value, to be range-checked";
  let description = [{
    Marks `index` as an index into a value with `size` components (a runtime
    component index `v[k]`, which the frontend lowers to selects).
    adjit-access-checks replaces it with a check that reports an index out
    of `[0, size)` like an out-of-range array access (`what` names the value
    in the report); without bounds checks it is dropped.

    ```mlir
    adjit.check_index %k, %c3 {what = "component of v"}
    ```
  }];
  let arguments = (ins Index:$index, Index:$size, StrAttr:$what);
  let assemblyFormat = "$index `,` $size attr-dict";
}

def Adjit_IndexRangeOp : Adjit_Op<"index_range", [Pure]> {
  let summary = "the smallest and largest value of an index array, per launch";
  let description = [{
    Only valid in a kernel. The minimum and maximum of the values of the
    integer array argument the kernel's `adjit.ranged_args` lists at `slot`,
    as the runtime measured them before the launch (it passes them in the
    error record, after the failure words: cpp/runtime/ErrorRecord.h). adjit-access-checks uses them to
    prove gathers such as `x[idx[i]]` once per launch; the runtime keeps the
    measurement while the array's version is unchanged.

    ```mlir
    %lo, %hi = adjit.index_range 0 : index, index
    ```
  }];
  let arguments = (ins I64Attr:$slot);
  let results = (outs Index:$lo, Index:$hi);
  let assemblyFormat = "$slot attr-dict `:` type($lo) `,` type($hi)";
  let hasVerifier = 1;
}

def Adjit_LaunchConditionOp : Adjit_Op<"launch_condition", [Pure, AllTypesMatch<["condition", "result"]>]> {
  let summary = "a condition with one value per launch, to version the kernel on";
  let description = [{
    Returns its operand, which must have the same value in every thread of a
    launch (it may only depend on kernel arguments, array sizes and
    `adjit.tid_bounds`). Launch passes compile the kernel with the result
    replaced by `true` or by `false` and evaluate the condition once per
    launch to pick the matching code (adjit-cpu-launch: the `true` variant
    reports launches where it fails, which then run the `all-checked`
    variant; adjit-gpu-launch: each thread evaluates it). adjit-access-checks
    guards the accesses it proves with it, so with `true` they are unchecked.
    At most one per kernel, in its entry block.

    ```mlir
    %proven = adjit.launch_condition %all_in_range : i1
    ```
  }];
  let arguments = (ins I1:$condition);
  let results = (outs I1:$result);
  let assemblyFormat = "$condition attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Array access
//===----------------------------------------------------------------------===//

def Adjit_ArrayAtAddressOp : Adjit_Op<"array_at_address", [Pure]> {
  let summary = "an array over memory at an address, with its extents";
  let description = [{
    The contiguous, row-major array of `extents` elements at `address` (a
    host or device address as an integer). adjit's geometry objects (a
    Mesh's points, a BVH's nodes) are reached this way: their handles are
    addresses of descriptors holding the addresses and extents of their
    arrays, written by adjit itself. `name` names the array in reports of
    out-of-range accesses.

    Differentiation treats the memory as constant: its reads have no
    adjoint or tangent, and writing a float into it is an error in the
    adjoint and tangent passes (it has no gradient array).

    ```mlir
    %p = adjit.array_at_address %addr [%n] {name = "mesh points"} : !adjit.array<vector<3xf32>, 1>
    ```
  }];
  let arguments = (ins I64:$address, Variadic<Index>:$extents, StrAttr:$name);
  let results = (outs Adjit_AnyArray:$result);
  let assemblyFormat = "$address `[` $extents `]` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Adjit_DimOp : Adjit_Op<"dim", [Pure]> {
  let summary = "an array's extent along one dimension";
  let description = [{
    `x.shape[k]` in a kernel.

    ```mlir
    %n = adjit.dim %x, 0 : !adjit.array<f32, 2>
    ```
  }];
  let arguments = (ins Adjit_AnyArray:$array, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$array `,` $dim attr-dict `:` type($array)";
  let hasVerifier = 1;
}

def Adjit_LoadOp : Adjit_Op<"load", [
    DeclareOpInterfaceMethods<Adjit_ArrayElementAccessOpInterface,
        ["getAccessedComponent", "getWrittenValue", "writesElement"]>,
    TypesMatchWith<"result is the array's element type", "array", "result",
                   "::llvm::cast<::mlir::adjit::ArrayType>($_self).getElementType()">]> {
  let summary = "reads one whole element of an array";
  let description = [{
    ```mlir
    %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
    ```
  }];
  let arguments = (ins Arg<Adjit_AnyArray, "", [MemRead]>:$array,
                       Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$array `[` $indices `]` attr-dict `:` type($array)";
  let hasVerifier = 1;
}

def Adjit_StoreOp : Adjit_Op<"store", [
    DeclareOpInterfaceMethods<Adjit_ArrayElementAccessOpInterface,
        ["getAccessedComponent", "readsElement"]>,
    TypesMatchWith<"value is the array's element type", "array", "value",
                   "::llvm::cast<::mlir::adjit::ArrayType>($_self).getElementType()">]> {
  let summary = "writes one whole element of an array";
  let description = [{
    ```mlir
    adjit.store %v, %y[%i] : !adjit.array<f32, 1>
    ```
  }];
  let arguments = (ins AnyType:$value,
                       Arg<Adjit_AnyArray, "", [MemWrite]>:$array,
                       Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $array `[` $indices `]` attr-dict `:` type($array)";
  let hasVerifier = 1;
}

def Adjit_LoadComponentOp : Adjit_Op<"load_component", [
    DeclareOpInterfaceMethods<Adjit_ArrayElementAccessOpInterface,
        ["getWrittenValue", "writesElement"]>]> {
  let summary = "reads one component (or matrix row) of an array element";
  let description = [{
    Reads only the addressed component of the element: `y[i].x`, `m[i][1, 2]`
    or a matrix row `m[i][1]`. The position is static.

    ```mlir
    %c = adjit.load_component %y[%i] [0] : !adjit.array<vector<3xf32>, 1> -> f32
    ```
  }];
  let arguments = (ins Arg<Adjit_AnyArray, "", [MemRead]>:$array,
                       Variadic<Index>:$indices, DenseI64ArrayAttr:$position);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $array `[` $indices `]` $position attr-dict `:` type($array) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Adjit_StoreComponentOp : Adjit_Op<"store_component", [
    DeclareOpInterfaceMethods<Adjit_ArrayElementAccessOpInterface, ["readsElement"]>]> {
  let summary = "writes one component (or matrix row) of an array element";
  let description = [{
    `y[i].x = v` is this one op, never a read-modify-write of the element, so
    the other components are not touched and their gradients are not mixed.

    ```mlir
    adjit.store_component %v, %y[%i] [0] : f32, !adjit.array<vector<3xf32>, 1>
    ```
  }];
  let arguments = (ins AnyType:$value,
                       Arg<Adjit_AnyArray, "", [MemWrite]>:$array,
                       Variadic<Index>:$indices, DenseI64ArrayAttr:$position);
  let assemblyFormat = [{
    $value `,` $array `[` $indices `]` $position attr-dict `:` type($value) `,` type($array)
  }];
  let hasVerifier = 1;
}

class Adjit_AtomicOp<string mnemonic, string what, string note = "">
    : Adjit_Op<mnemonic, [AllTypesMatch<["value", "result"]>,
                          Adjit_ArrayElementAccessOpInterface]> {
  let summary = "atomically " # what # " an array element or one of its components";
  let description = [{
    Atomically combines `value` into the element (or, with a non-empty
    position, the component) at the index and returns the previous value.
    Vector and matrix values are combined component by component, each
    component atomically (as in Warp).}] # note # [{

    ```mlir
    %old = adjit.}] # mnemonic # [{ %v, %y[%i] [] : f32, !adjit.array<f32, 1>
    %oldx = adjit.}] # mnemonic # [{ %s, %p[%i] [0] : f32, !adjit.array<vector<3xf32>, 1>
    ```
  }];
  let arguments = (ins AnyType:$value,
                       Arg<Adjit_AnyArray, "", [MemRead, MemWrite]>:$array,
                       Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$position);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $value `,` $array `[` $indices `]` $position attr-dict `:` type($value) `,` type($array)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$value, "::mlir::Value":$array,
                   "::mlir::ValueRange":$indices,
                   CArg<"::llvm::ArrayRef<int64_t>", "{}">:$position), [{
      build($_builder, $_state, value.getType(), value, array, indices,
            $_builder.getDenseI64ArrayAttr(position));
    }]>];
  let hasVerifier = 1;
}

def Adjit_AtomicAddOp : Adjit_AtomicOp<"atomic_add", "adds into">;
def Adjit_AtomicMinOp : Adjit_AtomicOp<"atomic_min", "takes the minimum with">;
def Adjit_AtomicMaxOp : Adjit_AtomicOp<"atomic_max", "takes the maximum with">;
def Adjit_AtomicExchOp : Adjit_AtomicOp<"atomic_exch", "stores a value into", [{
    Only scalar (integer or float) values: the element's new value is
    `value`, whatever it was.}]>;
def Adjit_AtomicAndOp : Adjit_AtomicOp<"atomic_and", "ands bits into", [{
    Integer values only.}]>;
def Adjit_AtomicOrOp : Adjit_AtomicOp<"atomic_or", "ors bits into", [{
    Integer values only.}]>;
def Adjit_AtomicXorOp : Adjit_AtomicOp<"atomic_xor", "xors bits into", [{
    Integer values only.}]>;

def Adjit_AtomicCasOp : Adjit_Op<"atomic_cas", [
    AllTypesMatch<["compare", "value", "result"]>,
    Adjit_ArrayElementAccessOpInterface]> {
  let summary = "atomic compare-and-swap of an array element or one of its components";
  let description = [{
    Atomically reads the element (or, with a non-empty position, the
    component) at the index, stores `value` there if the element equals
    `compare` bit for bit, and returns the element read. Scalar integer or
    float values only (a float compares as its bits: -0.0 is not 0.0 and a
    NaN matches the same NaN).

    ```mlir
    %old = adjit.atomic_cas %expected, %new, %y[%i] [] : i32, !adjit.array<i32, 1>
    ```
  }];
  let arguments = (ins AnyType:$compare, AnyType:$value,
                       Arg<Adjit_AnyArray, "", [MemRead, MemWrite]>:$array,
                       Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$position);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $compare `,` $value `,` $array `[` $indices `]` $position attr-dict `:` type($value) `,` type($array)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$compare, "::mlir::Value":$value,
                   "::mlir::Value":$array, "::mlir::ValueRange":$indices,
                   CArg<"::llvm::ArrayRef<int64_t>", "{}">:$position), [{
      build($_builder, $_state, value.getType(), compare, value, array, indices,
            $_builder.getDenseI64ArrayAttr(position));
    }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Components of vector and matrix values
//===----------------------------------------------------------------------===//

def Adjit_ExtractOp : Adjit_Op<"extract", [Pure]> {
  let summary = "reads a component or matrix row of a vector/matrix value";
  let description = [{
    ```mlir
    %x = adjit.extract %v [0] : vector<3xf32> -> f32
    %r = adjit.extract %m [1] : vector<3x3xf32> -> vector<3xf32>
    %e = adjit.extract %m [1, 2] : vector<3x3xf32> -> f32
    ```
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$source, DenseI64ArrayAttr:$position);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$source $position attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Adjit_InsertOp : Adjit_Op<"insert", [Pure, AllTypesMatch<["dest", "result"]>]> {
  let summary = "a vector/matrix value with one component or row replaced";
  let description = [{
    Component writes on local values (`v.x = s`, `m[1, 2] = s`, `m[0] = row`)
    are functional: the result is a new value and `dest` is unchanged, so an
    alias taken before the write (`b = a`) keeps the old value.

    ```mlir
    %w = adjit.insert %s, %v [0] : f32 into vector<3xf32>
    ```
  }];
  let arguments = (ins AnyType:$value, AnyVectorOfNonZeroRank:$dest,
                       DenseI64ArrayAttr:$position);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $value `,` $dest $position attr-dict `:` type($value) `into` type($dest)
  }];
  let hasVerifier = 1;
}

def Adjit_StopGradientOp : Adjit_Op<"stop_gradient", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "the identity, with a zero derivative";
  let description = [{
    Passes its operand through unchanged; the adjoint pass propagates no
    gradient through it. The frontend emits it for `adjit.stop_gradient(x)`,
    for results of non-differentiable device functions, and for reads of
    kernel arguments marked `no_grad`.

    ```mlir
    %y = adjit.stop_gradient %x : f32
    ```
  }];
  let arguments = (ins AnyType:$input);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Adjit_PrintOp : Adjit_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "prints values with a printf format (print() and printf() in kernels)";
  let description = [{
    Prints `args` (integers, index, floats) formatted by the C printf
    `format` to the process's standard output. The launch passes lower it:
    to a call of the C library's printf on the CPU, to `gpu.printf` on the
    GPU. A kernel that prints runs its threads in order on one core
    (adjit-atomic-order: "serial"), so its lines come out in thread order;
    the adjoint kernel's replay of the forward drops it.

    ```mlir
    adjit.print "x = %g, i = %d\n"(%x, %i : f32, i32)
    ```
  }];
  let arguments = (ins StrAttr:$format, Variadic<AnyTypeOf<[AnySignlessInteger, Index, F32, F64]>>:$args);
  let assemblyFormat = "$format (`(` $args^ `:` type($args) `)`)? attr-dict";
}

//===----------------------------------------------------------------------===//
// Device function calls
//===----------------------------------------------------------------------===//

def Adjit_CallOp : Adjit_Op<"call", [
    CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls a device function";
  let description = [{
    Calls a `func.func` device function (`@adjit.func` in Python) in the same
    module. Device functions take and return values only.

    ```mlir
    %r = adjit.call @square(%x) : (f32) -> f32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::func::FuncOp":$callee, "::mlir::ValueRange":$operands), [{
      $_state.addOperands(operands);
      $_state.addAttribute("callee", ::mlir::SymbolRefAttr::get(callee));
      $_state.addTypes(callee.getFunctionType().getResults());
    }]>];
  let extraClassDeclaration = [{
    ::mlir::FunctionType getCalleeType();
    ::mlir::CallInterfaceCallable getCallableForCallee() { return getCalleeAttr(); }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() { return getOperandsMutable(); }
  }];
}

def Adjit_GradCallOp : Adjit_Op<"grad_call", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the gradient of a device function at its arguments";
  let description = [{
    `wp.grad(f)(x, y)` in Python: the derivatives of `f`'s float scalar
    result with respect to each of its (float scalar, vector or matrix)
    arguments, at the given arguments, one result per argument of the same
    type. adjit-expand-grad-calls replaces it by the forward-mode derivative
    of `f`'s body (one tangent lane per argument component), so it is made
    of ordinary ops that both autodiff passes differentiate again.

    ```mlir
    %gx, %gv = adjit.grad_call @f(%x, %v) : (f32, vector<3xf32>) -> (f32, vector<3xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ADJIT_OPS_TD
