//===- AdjitTypes.td - adjit types --------------------------*- tablegen -*-===//

#ifndef ADJIT_TYPES_TD
#define ADJIT_TYPES_TD

include "AdjitDialect.td"

def Adjit_ArrayType : TypeDef<Adjit_Dialect, "Array"> {
  let mnemonic = "array";
  let summary = "a 1-4 dimensional array in memory";
  let description = [{
    A handle to a contiguous, row-major array of `rank` dimensions whose
    extents are known only at launch. The element is a scalar (f16, bf16,
    f32, f64, i8, i16, i32, i64), a vector `vector<NxT>` (N in 2..4) or a matrix `vector<RxCxT>`
    (R, C in 2..4) of a float scalar; a vector or matrix element is stored as
    its packed components (a vec3 of f32 takes 12 bytes).

    ```mlir
    !adjit.array<f32, 1>
    !adjit.array<vector<3xf32>, 2>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "unsigned":$rank);
  let assemblyFormat = "`<` $elementType `,` $rank `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The scalar type of one component of an element.
    ::mlir::Type getScalarType() const;
    /// The static component shape of an element: {} for scalars, {N} for
    /// vectors, {R, C} for matrices.
    ::llvm::ArrayRef<int64_t> getComponentShape() const;
  }];
}

def Adjit_AnyArray : Type<CPred<"::llvm::isa<::mlir::adjit::ArrayType>($_self)">,
                          "adjit array", "::mlir::adjit::ArrayType">;

#endif // ADJIT_TYPES_TD
