// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL

// adjit-adjoint: the rules of the adjit memory and component ops, on the raw
// adjoint (prefix RAW) and after canonicalize,cse (prefix CANON).
// - A load x[j] adds its adjoint into grad_x[j]: with atomic_add when other
//   threads may touch that element, with a plain load, addf, store when every
//   access of the kernel to x is at the thread's own element (j = tid).
// - A store y[i] = v (or a component of it) first reads the gradient slot
//   grad_y[i] into v's adjoint, then zeroes the slot (what the store
//   overwrote gets no gradient).
// - extract/insert touch only the addressed component of an adjoint.

/// A load at the thread's own element: grad_x[i] += G without atomics; the
/// store reads grad_y[i] before zeroing it.
// PRIMAL-LABEL: func.func @load_own(
// RAW-LABEL: func.func @load_own_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @load_own_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @load_own(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A load of a neighbour's element (other threads read it too): the
/// adjoint is atomically added into grad_x at the replayed index.
// PRIMAL-LABEL: func.func @load_shared(
// RAW-LABEL: func.func @load_shared_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// RAW-NEXT: %[[J:.*]] = arith.addi %[[I]], %[[ONE]] : index
// RAW-NEXT: adjit.load %[[X]][%[[J]]] : <f32, 1>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: adjit.atomic_add %[[G]], %[[GX]][%[[J]]] [] : f32, <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @load_shared_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[J:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.atomic_add %[[G]], %[[GX]][%[[J]]] [] : f32, <f32, 1>
// CANON-NEXT: return
func.func @load_shared(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %a = adjit.load %x[%j] : !adjit.array<f32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}

/// load_component at the thread's own element: only that component of the
/// gradient element is read, updated and written back.
// PRIMAL-LABEL: func.func @load_component_own(
// RAW-LABEL: func.func @load_component_own_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: adjit.load_component %[[X]][%[[I]]] [0, 2] : <vector<2x3xf32>, 1> -> f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLD:.*]] = adjit.load_component %[[GX]][%[[I]]] [0, 2] : <vector<2x3xf32>, 1> -> f32
// RAW-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// RAW-NEXT: adjit.store_component %[[NEW]], %[[GX]][%[[I]]] [0, 2] : f32, <vector<2x3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @load_component_own_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLD:.*]] = adjit.load_component %[[GX]][%[[I]]] [0, 2] : <vector<2x3xf32>, 1> -> f32
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// CANON-NEXT: adjit.store_component %[[NEW]], %[[GX]][%[[I]]] [0, 2] : f32, <vector<2x3xf32>, 1>
// CANON-NEXT: return
func.func @load_component_own(%x: !adjit.array<vector<2x3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %e = adjit.load_component %x[%i] [0, 2] : !adjit.array<vector<2x3xf32>, 1> -> f32
  adjit.store %e, %y[%i] : !adjit.array<f32, 1>
  return
}

/// load_component of a row (own element) and of an entry (a neighbour's
/// element): x is not own-element only, so both adjoints are atomic adds at
/// the component's position and the replayed indices.
// PRIMAL-LABEL: func.func @load_component_shared(
// RAW-LABEL: func.func @load_component_shared_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// RAW-NEXT: %[[J:.*]] = arith.addi %[[I]], %[[ONE]] : index
// RAW-NEXT: adjit.load_component %[[X]][%[[I]]] [1] : <vector<2x3xf32>, 1> -> vector<3xf32>
// RAW-NEXT: adjit.load_component %[[X]][%[[J]]] [0, 2] : <vector<2x3xf32>, 1> -> f32
// RAW-NEXT: %[[GE:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[GROW:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// RAW-NEXT: adjit.store %[[ZROW]], %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: adjit.atomic_add %[[GE]], %[[GX]][%[[J]]] [0, 2] : f32, <vector<2x3xf32>, 1>
// RAW-NEXT: adjit.atomic_add %[[GROW]], %[[GX]][%[[I]]] [1] : vector<3xf32>, <vector<2x3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @load_component_shared_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[J:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CANON-NEXT: %[[GE:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[GROW:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: adjit.store %[[ZROW]], %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: adjit.atomic_add %[[GE]], %[[GX]][%[[J]]] [0, 2] : f32, <vector<2x3xf32>, 1>
// CANON-NEXT: adjit.atomic_add %[[GROW]], %[[GX]][%[[I]]] [1] : vector<3xf32>, <vector<2x3xf32>, 1>
// CANON-NEXT: return
func.func @load_component_shared(%x: !adjit.array<vector<2x3xf32>, 1>, %y: !adjit.array<vector<3xf32>, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %row = adjit.load_component %x[%i] [1] : !adjit.array<vector<2x3xf32>, 1> -> vector<3xf32>
  %e = adjit.load_component %x[%j] [0, 2] : !adjit.array<vector<2x3xf32>, 1> -> f32
  adjit.store %row, %y[%i] : !adjit.array<vector<3xf32>, 1>
  adjit.store %e, %z[%i] : !adjit.array<f32, 1>
  return
}

/// Two stores to one slot: the later store (reversed first) takes the slot's
/// gradient and zeroes it, so the earlier, overwritten store reads zero:
/// y = a * a gives a the adjoint 0 + G*a + G*a.
// PRIMAL-LABEL: func.func @store_twice(
// RAW-LABEL: func.func @store_twice_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.mulf %[[A]], %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[G0:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO0:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO0]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[S1:.*]] = arith.addf %[[G0]], %[[D1]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.addf %[[S1]], %[[D2]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @store_twice_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G0:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[S1:.*]] = arith.addf %[[G0]], %[[D1]] : f32
// CANON-NEXT: %[[D:.*]] = arith.addf %[[S1]], %[[D1]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @store_twice(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = arith.mulf %a, %a : f32
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  adjit.store %b, %y[%i] : !adjit.array<f32, 1>
  return
}

/// store_component of an entry and of a row: each reads its component of the
/// gradient slot (load_component) and zeroes only that component; a receives
/// G[0][1] + 3 * (G[1][0] + G[1][1]).
// PRIMAL-LABEL: func.func @store_component(
// RAW-LABEL: func.func @store_component_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// RAW-NEXT: arith.mulf %[[A]], %[[THREE]] : f32
// RAW-NEXT: vector.broadcast
// RAW-NEXT: %[[GROW:.*]] = adjit.load_component %[[GY]][%[[I]]] [1] : <vector<2x2xf32>, 1> -> vector<2xf32>
// RAW-NEXT: %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// RAW-NEXT: adjit.store_component %[[ZROW]], %[[GY]][%[[I]]] [1] : vector<2xf32>, <vector<2x2xf32>, 1>
// RAW-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[GROW]] : vector<2xf32> to vector<2xf32>
// RAW-NEXT: %[[DB:.*]] = vector.reduction <add>, %[[FLAT]] : vector<2xf32> into f32
// RAW-NEXT: %[[GE:.*]] = adjit.load_component %[[GY]][%[[I]]] [0, 1] : <vector<2x2xf32>, 1> -> f32
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store_component %[[ZERO]], %[[GY]][%[[I]]] [0, 1] : f32, <vector<2x2xf32>, 1>
// RAW-NEXT: %[[DB3:.*]] = arith.mulf %[[DB]], %[[THREE]] : f32
// RAW-NEXT: %[[D:.*]] = arith.addf %[[GE]], %[[DB3]] : f32
// RAW-NEXT: arith.mulf %[[DB]], %[[A]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @store_component_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CANON-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[GROW:.*]] = adjit.load_component %[[GY]][%[[I]]] [1] : <vector<2x2xf32>, 1> -> vector<2xf32>
// CANON-NEXT: adjit.store_component %[[ZROW]], %[[GY]][%[[I]]] [1] : vector<2xf32>, <vector<2x2xf32>, 1>
// CANON-NEXT: %[[DB:.*]] = vector.reduction <add>, %[[GROW]] : vector<2xf32> into f32
// CANON-NEXT: %[[GE:.*]] = adjit.load_component %[[GY]][%[[I]]] [0, 1] : <vector<2x2xf32>, 1> -> f32
// CANON-NEXT: adjit.store_component %[[ZERO]], %[[GY]][%[[I]]] [0, 1] : f32, <vector<2x2xf32>, 1>
// CANON-NEXT: %[[DB3:.*]] = arith.mulf %[[DB]], %[[THREE]] : f32
// CANON-NEXT: %[[D:.*]] = arith.addf %[[GE]], %[[DB3]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @store_component(%x: !adjit.array<f32, 1>, %y: !adjit.array<vector<2x2xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c3 = arith.constant 3.0 : f32
  %b = arith.mulf %a, %c3 : f32
  adjit.store_component %a, %y[%i] [0, 1] : f32, !adjit.array<vector<2x2xf32>, 1>
  %r = vector.broadcast %b : f32 to vector<2xf32>
  adjit.store_component %r, %y[%i] [1] : vector<2xf32>, !adjit.array<vector<2x2xf32>, 1>
  return
}

/// adjit.extract of a row and of an entry: each updates only its component
/// of the matrix's adjoint (a row is accumulated with extract, addf, insert).
// PRIMAL-LABEL: func.func @extract(
// RAW-LABEL: func.func @extract_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[M:.*]] = adjit.load %[[X]][%[[I]]] : <vector<2x3xf32>, 1>
// RAW-NEXT: %[[ROW:.*]] = adjit.extract %[[M]] [1] : vector<2x3xf32> -> vector<3xf32>
// RAW-NEXT: adjit.extract %[[M]] [0, 2] : vector<2x3xf32> -> f32
// RAW-NEXT: adjit.extract %[[ROW]] [0] : vector<3xf32> -> f32
// RAW-NEXT: arith.addf
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// RAW-NEXT: %[[DROW:.*]] = vector.insert %[[G]], %[[Z3]] [0] : f32 into vector<3xf32>
// RAW-NEXT: %[[Z23:.*]] = arith.constant dense<0.000000e+00> : vector<2x3xf32>
// RAW-NEXT: %[[DM0:.*]] = vector.insert %[[G]], %[[Z23]] [0, 2] : f32 into vector<2x3xf32>
// RAW-NEXT: %[[OLDROW:.*]] = vector.extract %[[DM0]][1] : vector<3xf32> from vector<2x3xf32>
// RAW-NEXT: %[[SUMROW:.*]] = arith.addf %[[OLDROW]], %[[DROW]] : vector<3xf32>
// RAW-NEXT: %[[D:.*]] = vector.insert %[[SUMROW]], %[[DM0]] [1] : vector<3xf32> into vector<2x3xf32>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<2x3xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<2x3xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<2x3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @extract_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[Z23:.*]] = arith.constant dense<0.000000e+00> : vector<2x3xf32>
// CANON-DAG: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DROW:.*]] = vector.insert %[[G]], %[[Z3]] [0] : f32 into vector<3xf32>
// CANON-NEXT: %[[DM0:.*]] = vector.insert %[[G]], %[[Z23]] [0, 2] : f32 into vector<2x3xf32>
// CANON-NEXT: %[[SUMROW:.*]] = arith.addf %[[DROW]], %[[Z3]] : vector<3xf32>
// CANON-NEXT: %[[D:.*]] = vector.insert %[[SUMROW]], %[[DM0]] [1] : vector<3xf32> into vector<2x3xf32>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<2x3xf32>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<2x3xf32>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<2x3xf32>, 1>
// CANON-NEXT: return
func.func @extract(%x: !adjit.array<vector<2x3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %m = adjit.load %x[%i] : !adjit.array<vector<2x3xf32>, 1>
  %row = adjit.extract %m [1] : vector<2x3xf32> -> vector<3xf32>
  %e = adjit.extract %m [0, 2] : vector<2x3xf32> -> f32
  %s = adjit.extract %row [0] : vector<3xf32> -> f32
  %r = arith.addf %e, %s : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// adjit.insert: the inserted value receives component 1 of G; the
/// destination receives G with component 1 zeroed.
// PRIMAL-LABEL: func.func @insert(
// RAW-LABEL: func.func @insert_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[A:.*]] = adjit.load %[[S]][%[[I]]] : <f32, 1>
// RAW-NEXT: adjit.insert %[[A]], %[[V]] [1] : f32 into vector<3xf32>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[DA:.*]] = vector.extract %[[G]][1] : f32 from vector<3xf32>
// RAW-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[DV:.*]] = vector.insert %[[Z]], %[[G]] [1] : f32 into vector<3xf32>
// RAW-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<3xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @insert_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>)
// CANON-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: adjit.store %[[Z3]], %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[DA:.*]] = vector.extract %[[G]][1] : f32 from vector<3xf32>
// CANON-NEXT: %[[DV:.*]] = vector.insert %[[Z]], %[[G]] [1] : f32 into vector<3xf32>
// CANON-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<3xf32>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: return
func.func @insert(%x: !adjit.array<vector<3xf32>, 1>, %s: !adjit.array<f32, 1>, %y: !adjit.array<vector<3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %a = adjit.load %s[%i] : !adjit.array<f32, 1>
  %w = adjit.insert %a, %v [1] : f32 into vector<3xf32>
  adjit.store %w, %y[%i] : !adjit.array<vector<3xf32>, 1>
  return
}

/// An in-place update at the thread's own element, read before written, is
/// differentiated (the runtime passes a pre-launch snapshot as x): the
/// store rule takes grad_x[i] and zeroes it before the load rule adds 2 a G.
// PRIMAL-LABEL: func.func @in_place(
// RAW-LABEL: func.func @in_place_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.mulf %[[A]], %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.addf %[[D1]], %[[D2]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @in_place_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.addf %[[D1]], %[[D1]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @in_place(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = arith.mulf %a, %a : f32
  adjit.store %b, %x[%i] : !adjit.array<f32, 1>
  return
}

/// Store-to-load forwarding: y[i] = a; b = y[i]; y[i] = b * b reads back a,
/// so y is never loaded in the adjoint and a receives 2 a G plus the (zero)
/// gradient left in the slot of the overwritten first store.
// PRIMAL-LABEL: func.func @forward(
// RAW-LABEL: func.func @forward_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.mulf %[[A]], %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[S:.*]] = arith.addf %[[D1]], %[[D2]] : f32
// RAW-NEXT: %[[G0:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D:.*]] = arith.addf %[[S]], %[[G0]] : f32
// RAW-NEXT: %[[ZERO0:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO0]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @forward_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[S:.*]] = arith.addf %[[D1]], %[[D1]] : f32
// CANON-NEXT: %[[G0:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.addf %[[S]], %[[G0]] : f32
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @forward(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %c = arith.mulf %b, %b : f32
  adjit.store %c, %y[%i] : !adjit.array<f32, 1>
  return
}

/// An own-element in-place update in a runtime loop: the element becomes a
/// loop-carried value (loaded before the loop, stored after it), so the
/// adjoint recomputes each iteration's value from the pre-loop load instead
/// of reading memory the loop overwrote (checkpointed from that load).
// PRIMAL-LABEL: func.func @in_place_loop(
// CANON-LABEL: func.func @in_place_loop_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[GX:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[X0:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GX]][%[[I]]] : <f32, 1>
// CANON: memref.alloca_scope
// CANON: scf.for {{.*}} iter_args(%[[V:.*]] = %[[X0]]) -> (f32) {
// CANON-NEXT: memref.store %[[V]]
// CANON: arith.mulf %{{.*}}, %{{.*}} : f32
// CANON: scf.for {{.*}} iter_args(%[[A:.*]] = %[[G]]) -> (f32) {
// CANON-NOT: adjit.load %[[X]]
// CANON: adjit.load %[[GX]][%[[I]]]
// CANON-NEXT: arith.addf
// CANON-NEXT: adjit.store %{{.*}}, %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @in_place_loop(%x: !adjit.array<f32, 1>, %n: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %n step %c1 {
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %b = arith.mulf %a, %a : f32
    adjit.store %b, %x[%i] : !adjit.array<f32, 1>
  }
  return
}

/// A read after a store in a branch (not forwardable) of the thread's own
/// element: the element is carried as one value through the kernel, loaded
/// once (the pre-launch value) and threaded through the scf.if as a result.
// PRIMAL-LABEL: func.func @store_in_branch_then_read(
// CANON-LABEL: func.func @store_in_branch_then_read_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[C:[^:]*]]: i1, %[[GX:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[X0:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[X1:.*]] = scf.if %[[C]] -> (f32) {
// CANON-NEXT: %[[SQ:.*]] = arith.mulf %[[X0]], %[[X0]] : f32
// CANON-NEXT: scf.yield %[[SQ]] : f32
// CANON-NEXT: } else {
// CANON-NEXT: scf.yield %[[X0]] : f32
// CANON-NEXT: }
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[X1]] : f32
// CANON-NOT: adjit.load %[[X]]
// CANON: return
func.func @store_in_branch_then_read(%x: !adjit.array<f32, 1>, %c: i1) attributes {adjit.kernel} {
  %i = adjit.tid : index
  scf.if %c {
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %b = arith.mulf %a, %a : f32
    adjit.store %b, %x[%i] : !adjit.array<f32, 1>
  }
  %d = adjit.load %x[%i] : !adjit.array<f32, 1>
  %e = arith.mulf %d, %d : f32
  adjit.store %e, %x[%i] : !adjit.array<f32, 1>
  return
}

/// Integer exch/cas/and/or/xor carry no gradient and are not replayed (they
/// happened in the forward launch): the adjoint only differentiates the
/// float store beside them.
// PRIMAL-LABEL: func.func @integer_atomics(
// CANON-LABEL: func.func @integer_atomics_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[K:[^:]*]]: !adjit.array<i32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GK:[^:]*]]: !adjit.array<i32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NOT: adjit.atomic
// CANON: %[[G:.*]] = adjit.load %[[GY]][%[[I:.*]]] : <f32, 1>
// CANON-NOT: adjit.atomic
// CANON: return
func.func @integer_atomics(%x: !adjit.array<f32, 1>, %k: !adjit.array<i32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %e = adjit.atomic_exch %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  %c = adjit.atomic_cas %one, %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  %n = adjit.atomic_and %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  %o = adjit.atomic_or %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  %r = adjit.atomic_xor %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}
