//! The dense reference evaluator: the meaning of a statement, computed the
//! obvious way, that every other part of the engine is tested against.
//!
//! Input: a [`Statement`], the tensors it names (any format) and sizes for
//! index variables no tensor fixes. Output: a [`DenseResult`], the left
//! tensor's every component in row-major order. It runs [`check()`] and
//! [`place_reductions`], converts each input to a dense array once, then
//! loops over the left-hand variables and evaluates the expression
//! recursively, each `sum` node looping over its variable. It sits beside
//! the pipeline, not in it: no lattices, no formats, no cleverness.
//!
//! Semantics: IEEE `f64` with the dense meaning everywhere — every
//! component of every tensor takes part, so `b(i) / c(i)` with `c(i) = 0`
//! gives `inf` or `NaN` exactly as dense arithmetic would. Sums start at
//! `0.0` and add in increasing order of their variable. `=` ignores the left
//! tensor's previous values; `+=` adds to them. The right side always reads
//! the inputs as given, even when it names the left tensor.

use std::collections::HashMap;

use tessera_formats::tensor::checked_product;
use tessera_formats::{Complex64, FormatError, Tensor, TensorRef, ValueType, MAX_POSITIONS};

use crate::error::{EngineError, Result};
use crate::notation::complex::{self, Part};
use crate::notation::{
    check, place_reductions, types, AssignOp, BinaryOp, Expr, Func, IndexSizes, Reduction, Statement,
};
use crate::words::Adder;

/// The dense value of a statement's left tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseResult {
    /// The left tensor's shape (`[]` for a scalar).
    pub shape: Vec<usize>,
    /// Every component in row-major order (one value for a scalar).
    pub values: Vec<f64>,
}

impl DenseResult {
    /// The result as a tensor in the dense format.
    pub fn to_tensor(&self) -> Result<Tensor<f64>> {
        Ok(Tensor::from_dense(&self.shape, self.values.clone())?)
    }

    /// The component at `coords` (`&[]` for a scalar).
    ///
    /// # Panics
    /// If `coords` has the wrong length or a coordinate is out of range.
    pub fn get(&self, coords: &[usize]) -> f64 {
        assert_eq!(
            coords.len(),
            self.shape.len(),
            "{} coordinates for an order-{} result",
            coords.len(),
            self.shape.len()
        );
        let mut flat = 0;
        for (&c, &d) in coords.iter().zip(&self.shape) {
            assert!(c < d, "coordinate {c} out of range for a mode of size {d}");
            flat = flat * d + c;
        }
        self.values[flat]
    }
}

/// Evaluates `stmt` densely.
///
/// `inputs` names the tensors the statement reads (for `+=`, the left
/// tensor too); `sizes` gives the size of index variables that no input
/// fixes (a broadcast `A(i,j) = b(i)` needs `j`). Errors are those of
/// [`check()`], a tensor given twice ([`EngineError::Unsupported`]), and
/// [`FormatError::TooLarge`] when the result or the loop nest would exceed
/// [`MAX_POSITIONS`] components or iterations, refused before allocating.
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::reference::evaluate;
/// use tessera_formats::Tensor;
///
/// let stmt = parse_statement("y(i) = A(i,j) * x(j) + b(i)").unwrap();
/// let a = Tensor::from_dense(&[2, 3], vec![1.0, 0.0, 2.0, 0.0, 3.0, 0.0]).unwrap();
/// let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
/// let b = Tensor::from_dense(&[2], vec![0.5, 0.25]).unwrap();
/// let y = evaluate(&stmt, &[("A", &a), ("x", &x), ("b", &b)], &[]).unwrap();
/// assert_eq!(y.shape, vec![2]);
/// assert_eq!(y.values, vec![201.5, 30.25]);
/// ```
pub fn evaluate(stmt: &Statement, inputs: &[(&str, &Tensor<f64>)], sizes: &[(&str, usize)]) -> Result<DenseResult> {
    let typed: Vec<(&str, TensorRef<'_>)> = inputs.iter().map(|&(n, t)| (n, TensorRef::F64(t))).collect();
    evaluate_typed(stmt, &typed, sizes)
}

/// [`evaluate`] for inputs of any value type: the statement typed as the
/// engine types it ([`types::typed`]), computed on the inputs' register
/// words ([`evaluate_words`]), each result rounded to the statement's type
/// and given in `f64` (integers beyond 2^53 rounded to the nearest `f64`).
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::reference::evaluate_typed;
/// use tessera_formats::{Tensor, TensorRef};
///
/// let stmt = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let a = Tensor::from_dense(&[2, 2], vec![true, false, false, false]).unwrap();
/// let x = Tensor::from_dense(&[2], vec![true, true]).unwrap();
/// let y = evaluate_typed(&stmt, &[("A", TensorRef::from(&a)), ("x", TensorRef::from(&x))], &[]).unwrap();
/// assert_eq!(y.values, vec![1.0, 0.0]);
/// ```
pub fn evaluate_typed(
    stmt: &Statement,
    inputs: &[(&str, TensorRef<'_>)],
    sizes: &[(&str, usize)],
) -> Result<DenseResult> {
    let (mut result, ty) = evaluate_words(stmt, inputs, sizes)?;
    if ty != ValueType::F64 {
        let number = |v: f64| if ty.is_integer() { ty.number(v) } else { ty.round(v) };
        result.values.iter_mut().for_each(|v| *v = number(*v));
    }
    Ok(result)
}

/// [`evaluate_typed`] with the results as the words the engine's registers
/// hold ([`tessera_formats::Value::to_word`]: integers as their bits, exact),
/// and the statement's type. Floats and truth values are computed in
/// `f64` and not yet rounded to `f32` or `bool`; integers with the
/// wrapping arithmetic of [`Func::Int`].
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::reference::evaluate_words;
/// use tessera_formats::{Tensor, TensorRef, Value, ValueType};
///
/// let stmt = parse_statement("s = sum(i, a(i) * a(i))").unwrap();
/// let a = Tensor::from_dense(&[2], vec![3_000_000_000i64, 1]).unwrap();
/// let (s, ty) = evaluate_words(&stmt, &[("a", TensorRef::from(&a))], &[]).unwrap();
/// assert_eq!(ty, ValueType::I64);
/// assert_eq!(i64::from_word(s.values[0]), 9_000_000_000_000_000_001);
/// ```
pub fn evaluate_words(
    stmt: &Statement,
    inputs: &[(&str, TensorRef<'_>)],
    sizes: &[(&str, usize)],
) -> Result<(DenseResult, ValueType)> {
    let type_of = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t.value_type());
    if complex::split(stmt, &type_of)?.is_some() {
        return Err(EngineError::Unsupported(format!(
            "{stmt} computes with complex values: evaluate_complex gives its result"
        )));
    }
    let typed = types::typed(stmt, &type_of)?;
    let words: Vec<(&str, std::borrow::Cow<'_, Tensor<f64>>)> = inputs
        .iter()
        .map(|&(n, t)| match t {
            TensorRef::F64(t) => (n, std::borrow::Cow::Borrowed(t)),
            t => (n, std::borrow::Cow::Owned(t.to_words())),
        })
        .collect();
    let words: Vec<(&str, &Tensor<f64>)> = words.iter().map(|(n, t)| (*n, t.as_ref())).collect();
    let result = evaluate_in(&typed.statement, typed.value_type, &words, sizes)?;
    Ok((result, typed.value_type))
}

/// The dense value of a statement over complex values (`c64` tensors, or
/// casts to `c64`), as the engine defines it: its real and imaginary parts
/// ([`crate::notation::complex::split`]) evaluated as real statements over
/// the parts of each complex input. Real statements are evaluated as
/// [`evaluate_typed`] does, their values the real parts.
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::reference::evaluate_complex;
/// use tessera_formats::{Complex64, Tensor, TensorRef};
///
/// let z = Tensor::from_dense(&[2], vec![Complex64::new(1.0, 2.0), Complex64::new(0.0, -1.0)]).unwrap();
/// let stmt = parse_statement("y(i) = z(i) * z(i)").unwrap();
/// let (shape, y) = evaluate_complex(&stmt, &[("z", TensorRef::from(&z))], &[]).unwrap();
/// assert_eq!((shape, y), (vec![2], vec![Complex64::new(-3.0, 4.0), Complex64::new(-1.0, 0.0)]));
/// ```
pub fn evaluate_complex(
    stmt: &Statement,
    inputs: &[(&str, TensorRef<'_>)],
    sizes: &[(&str, usize)],
) -> Result<(Vec<usize>, Vec<Complex64>)> {
    let type_of = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t.value_type());
    let Some(split) = complex::split(stmt, &type_of)? else {
        let real = evaluate_typed(stmt, inputs, sizes)?;
        return Ok((real.shape, real.values.into_iter().map(Complex64::from).collect()));
    };
    let parts: Vec<(String, Tensor<f64>)> = inputs
        .iter()
        .flat_map(|&(name, t)| match t {
            TensorRef::C64(z) => {
                let (re, im) = tessera_formats::typed::complex_parts(z);
                vec![
                    (complex::part_name(name, Part::Re), re),
                    (complex::part_name(name, Part::Im), im),
                ]
            }
            _ => Vec::new(),
        })
        .collect();
    let mut part_inputs: Vec<(&str, TensorRef<'_>)> = inputs
        .iter()
        .filter(|(_, t)| t.value_type() != ValueType::C64)
        .copied()
        .collect();
    part_inputs.extend(parts.iter().map(|(n, t)| (n.as_str(), TensorRef::from(t))));
    // A part may read none of the tensors that fix a variable's size: the
    // parts take the sizes the whole statement fixes.
    let given = given_sizes(sizes)?;
    let whole = check(
        stmt,
        &|name| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t.shape().to_vec()),
        &|var| given.iter().find(|(v, _)| *v == var).map(|&(_, n)| n),
    )?;
    let sizes: Vec<(&str, usize)> = whole.iter().map(|(v, n)| (v.as_str(), n)).collect();
    let re = evaluate_typed(&split.re, &part_inputs, &sizes)?;
    let im = match &split.im {
        Some(im) => evaluate_typed(im, &part_inputs, &sizes)?.values,
        None => vec![0.0; re.values.len()],
    };
    let values = re.values.iter().zip(&im).map(|(&a, &b)| Complex64::new(a, b)).collect();
    Ok((re.shape, values))
}

/// [`evaluate`] of a typed statement on register words, its reductions
/// and `+=` computing in `ty`.
fn evaluate_in(
    stmt: &Statement,
    ty: ValueType,
    inputs: &[(&str, &Tensor<f64>)],
    sizes: &[(&str, usize)],
) -> Result<DenseResult> {
    for (k, (name, _)) in inputs.iter().enumerate() {
        if inputs[..k].iter().any(|(n, _)| n == name) {
            return Err(EngineError::Unsupported(format!("tensor {name} is given twice")));
        }
    }
    let input = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|&(_, t)| t);
    let given = given_sizes(sizes)?;
    let index_sizes = check(stmt, &|name| input(name).map(|t| t.shape().to_vec()), &|var| {
        given.iter().find(|(v, _)| *v == var).map(|&(_, n)| n)
    })?;
    let stmt = place_reductions(stmt);

    let shape = index_sizes.output_shape().to_vec();
    let out_len = checked_product(&shape)?;
    let nest = loop_nest(&stmt.rhs, &index_sizes);
    if out_len.saturating_mul(nest) > MAX_POSITIONS {
        return Err(FormatError::TooLarge(format!(
            "evaluating {stmt} densely takes more than {MAX_POSITIONS} iterations"
        ))
        .into());
    }

    // Each tensor read is converted to a dense array once.
    let mut dense: Dense = HashMap::new();
    let mut convert = |name: &str| -> Result<()> {
        if dense.contains_key(name) {
            return Ok(());
        }
        let Some(tensor) = input(name) else {
            debug_assert!(false, "check verified that {name} is given");
            return Err(EngineError::Unsupported(format!("tensor {name} is not given")));
        };
        let strides = row_major_strides(tensor.shape());
        dense.insert(name.to_owned(), (tensor.to_dense_vec()?, strides));
        Ok(())
    };
    for a in stmt.rhs.accesses() {
        convert(&a.tensor)?;
    }
    let mut values = if stmt.op == AssignOp::AddAssign {
        convert(&stmt.lhs.tensor)?;
        dense.get(&stmt.lhs.tensor).map(|(v, _)| v.clone()).unwrap_or_default()
    } else {
        vec![0.0; out_len]
    };
    debug_assert_eq!(values.len(), out_len);

    let node = compile(&stmt.rhs, &dense, &index_sizes, ty)?;
    let adder = Adder::of(ty);
    let out_slots: Vec<usize> = stmt
        .lhs
        .indices
        .iter()
        .filter_map(|v| index_sizes.position(v))
        .collect();
    let mut coords = vec![0usize; index_sizes.len()];
    for value in values.iter_mut() {
        let v = node.eval(&mut coords);
        *value = match stmt.op {
            AssignOp::Assign => v,
            AssignOp::AddAssign => adder.add(*value, v),
        };
        // Next output coordinates, the last mode fastest (row-major).
        for (&slot, &extent) in out_slots.iter().zip(&shape).rev() {
            coords[slot] += 1;
            if coords[slot] < extent {
                break;
            }
            coords[slot] = 0;
        }
    }
    Ok(DenseResult { shape, values })
}

/// The given sizes, refusing one variable given two different sizes.
fn given_sizes<'a>(sizes: &[(&'a str, usize)]) -> Result<Vec<(&'a str, usize)>> {
    let mut out: Vec<(&str, usize)> = Vec::with_capacity(sizes.len());
    for &(var, n) in sizes {
        match out.iter().find(|(v, _)| *v == var) {
            Some(&(_, m)) if m != n => {
                return Err(EngineError::SizeMismatch {
                    var: var.to_owned(),
                    first: "the given sizes".to_owned(),
                    first_size: m,
                    second: "the given sizes".to_owned(),
                    second_size: n,
                })
            }
            Some(_) => {}
            None => out.push((var, n)),
        }
    }
    Ok(out)
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for m in (0..shape.len().saturating_sub(1)).rev() {
        strides[m] = strides[m + 1] * shape[m + 1];
    }
    strides
}

/// Iterations per output component: the largest product of `sum` extents
/// along any path of the expression (saturating).
fn loop_nest(e: &Expr, sizes: &IndexSizes) -> usize {
    match e {
        Expr::Access(_) | Expr::Literal(_) => 1,
        Expr::Neg(x) => loop_nest(x, sizes),
        Expr::Binary { lhs, rhs, .. } => loop_nest(lhs, sizes).max(loop_nest(rhs, sizes)),
        Expr::Call { args, .. } => args.iter().map(|a| loop_nest(a, sizes)).max().unwrap_or(1),
        Expr::Reduce { var, body, .. } => sizes.get(&var.0).unwrap_or(0).saturating_mul(loop_nest(body, sizes)),
    }
}

/// The expression with names resolved: accesses point at dense arrays and
/// read them through precomputed (variable slot, stride) pairs.
enum Node<'a> {
    Access {
        values: &'a [f64],
        terms: Vec<(usize, usize)>,
    },
    Literal(f64),
    Neg(Box<Node<'a>>),
    Binary {
        op: BinaryOp,
        lhs: Box<Node<'a>>,
        rhs: Box<Node<'a>>,
    },
    Call {
        func: Func,
        args: Vec<Node<'a>>,
    },
    Reduce {
        op: Reduction,
        ty: ValueType,
        slot: usize,
        extent: usize,
        body: Box<Node<'a>>,
    },
}

/// Each tensor read, by name: its dense values and row-major strides.
type Dense = HashMap<String, (Vec<f64>, Vec<usize>)>;

fn compile<'a>(e: &Expr, dense: &'a Dense, sizes: &IndexSizes, ty: ValueType) -> Result<Node<'a>> {
    let missing = |what: String| {
        debug_assert!(false, "check guarantees {what}");
        EngineError::Unsupported(format!("internal error: {what} is missing"))
    };
    Ok(match e {
        Expr::Access(a) => {
            let (values, strides) = dense
                .get(&a.tensor)
                .ok_or_else(|| missing(format!("the values of {}", a.tensor)))?;
            let terms = a
                .indices
                .iter()
                .zip(strides)
                .map(|(v, &stride)| {
                    let slot = sizes.position(v).ok_or_else(|| missing(format!("the size of {v}")))?;
                    Ok((slot, stride))
                })
                .collect::<Result<Vec<_>>>()?;
            Node::Access { values, terms }
        }
        Expr::Literal(v) => Node::Literal(*v),
        Expr::Neg(x) => Node::Neg(Box::new(compile(x, dense, sizes, ty)?)),
        Expr::Binary { op, lhs, rhs } => Node::Binary {
            op: *op,
            lhs: Box::new(compile(lhs, dense, sizes, ty)?),
            rhs: Box::new(compile(rhs, dense, sizes, ty)?),
        },
        Expr::Call { func, args } => Node::Call {
            func: *func,
            args: args
                .iter()
                .map(|a| compile(a, dense, sizes, ty))
                .collect::<Result<_>>()?,
        },
        Expr::Reduce { op, var, body } => Node::Reduce {
            op: *op,
            ty,
            slot: sizes
                .position(var)
                .ok_or_else(|| missing(format!("the size of {var}")))?,
            extent: sizes.get(&var.0).unwrap_or(0),
            body: Box::new(compile(body, dense, sizes, ty)?),
        },
    })
}

impl Node<'_> {
    /// The value at the index-variable values `coords` (one per slot).
    fn eval(&self, coords: &mut [usize]) -> f64 {
        match self {
            Node::Access { values, terms } => {
                let flat: usize = terms.iter().map(|&(slot, stride)| coords[slot] * stride).sum();
                values[flat]
            }
            Node::Literal(v) => *v,
            Node::Neg(x) => -x.eval(coords),
            Node::Binary { op, lhs, rhs } => {
                let (a, b) = (lhs.eval(coords), rhs.eval(coords));
                op.apply(a, b)
            }
            Node::Call { func, args } => {
                let values: Vec<f64> = args.iter().map(|a| a.eval(coords)).collect();
                func.apply(&values)
            }
            Node::Reduce {
                op,
                ty,
                slot,
                extent,
                body,
            } => {
                let mut acc = op.identity_for(*ty);
                for k in 0..*extent {
                    coords[*slot] = k;
                    acc = op.combine_for(*ty, acc, body.eval(coords));
                }
                acc
            }
        }
    }
}
