//! The binsparse JSON descriptor, and how its levels map to tessera's.
//!
//! A binsparse format is a tree of levels: `dense` (every coordinate),
//! `sparse` of rank `r` (the listed coordinate tuples, sorted and unique;
//! rank 1 is a compressed level, rank `r > 1` a compressed level over
//! `r - 1` singletons, as in COO) and `element` (the values), with a
//! `swizzle` saying which mode each dimension of the tree is. The named
//! formats (`CSR`, `COOC`, …) are shorthands for such trees, so the reader
//! turns every descriptor into a [`Layout`] and handles one thing.

use serde_json::{json, Map, Value as Json};

use crate::format::{Format, LevelFormat, LevelKind, Projection, Split};
use crate::level::Level;

/// One level of a binsparse format tree, above its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TreeLevel {
    /// Every coordinate of one dimension.
    Dense,
    /// The stored coordinate tuples of `rank` dimensions.
    Sparse { rank: usize },
}

impl TreeLevel {
    pub(super) fn rank(self) -> usize {
        match self {
            TreeLevel::Dense => 1,
            TreeLevel::Sparse { rank } => rank,
        }
    }
}

/// A format tree and the mode each of its dimensions stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    pub levels: Vec<TreeLevel>,
    /// Dimension `d` of the tree is mode `swizzle[d]` of the tensor.
    pub swizzle: Vec<usize>,
}

/// The named formats of the specification, with the names the reader also
/// accepts (`COO` for `COOR`, `DMAT` for `DMATR`, `VEC` for `CVEC`). The
/// writer uses the first name of a layout.
const NAMED: [(&str, &[TreeLevel], &[usize]); 13] = {
    use TreeLevel::{Dense as D, Sparse as S};
    [
        ("DVEC", &[D], &[0]),
        ("CVEC", &[S { rank: 1 }], &[0]),
        ("VEC", &[S { rank: 1 }], &[0]),
        ("DMATR", &[D, D], &[0, 1]),
        ("DMAT", &[D, D], &[0, 1]),
        ("DMATC", &[D, D], &[1, 0]),
        ("CSR", &[D, S { rank: 1 }], &[0, 1]),
        ("CSC", &[D, S { rank: 1 }], &[1, 0]),
        ("DCSR", &[S { rank: 1 }, S { rank: 1 }], &[0, 1]),
        ("DCSC", &[S { rank: 1 }, S { rank: 1 }], &[1, 0]),
        ("COOR", &[S { rank: 2 }], &[0, 1]),
        ("COO", &[S { rank: 2 }], &[0, 1]),
        ("COOC", &[S { rank: 2 }], &[1, 0]),
    ]
};

impl Layout {
    /// The layout of a named format.
    fn named(name: &str) -> Option<Layout> {
        NAMED
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, levels, swizzle)| Layout {
                levels: levels.to_vec(),
                swizzle: swizzle.to_vec(),
            })
    }

    /// The specification's name for this layout, if it has one.
    pub(super) fn name(&self) -> Option<&'static str> {
        NAMED
            .iter()
            .find(|(_, levels, swizzle)| *levels == self.levels.as_slice() && *swizzle == self.swizzle.as_slice())
            .map(|(n, _, _)| *n)
    }

    /// The order of the tensor the layout stores.
    pub(super) fn order(&self) -> usize {
        self.levels.iter().map(|l| l.rank()).sum()
    }

    /// The first dimension of each level of the tree.
    pub(super) fn first_dimensions(&self) -> Vec<usize> {
        self.levels
            .iter()
            .scan(0, |d, l| {
                let first = *d;
                *d += l.rank();
                Some(first)
            })
            .collect()
    }

    /// The tessera format that stores this layout level for level: dense
    /// as dense, a sparse level of rank 1 as compressed, of rank `r` as a
    /// non-unique compressed level over `r - 1` singletons (the last
    /// unique), every level ordered.
    pub(super) fn format(&self) -> Result<Format, String> {
        let mut levels = Vec::with_capacity(self.order());
        for level in &self.levels {
            match *level {
                TreeLevel::Dense => levels.push(LevelFormat::dense()),
                TreeLevel::Sparse { rank } => {
                    for k in 0..rank {
                        let base = if k == 0 {
                            LevelFormat::compressed()
                        } else {
                            LevelFormat::singleton()
                        };
                        levels.push(if k + 1 < rank { base.non_unique() } else { base });
                    }
                }
            }
        }
        Format::from_levels(&levels, &self.swizzle).map_err(|e| e.to_string())
    }

    /// The layout that stores `format`'s arrays as they are, or why
    /// binsparse cannot: its levels are dense, compressed, and compressed
    /// over singletons (coordinates), sorted, each storing a whole mode.
    pub(super) fn of_format(format: &Format) -> Result<Layout, String> {
        let refuse = |k: usize, what: String| {
            Err(format!(
                "binsparse cannot store format {format}: its level {k} is {what}; binsparse stores dense levels, \
                 sorted compressed levels and sorted coordinates (convert to csr, csc, dcsr, dcsc, coo, csf or dense)"
            ))
        };
        let mut swizzle = Vec::with_capacity(format.order());
        for (k, level) in format.levels().iter().enumerate() {
            match level.projection {
                Projection::Mode {
                    mode,
                    split: Split::Whole,
                } => swizzle.push(mode),
                _ => {
                    return refuse(
                        k,
                        format!("{} over part of a mode or a derived coordinate", level.level.name()),
                    )
                }
            }
        }
        let mut levels = Vec::new();
        let mut k = 0;
        let all = format.levels();
        while k < all.len() {
            let level = all[k].level;
            match level.kind {
                LevelKind::Dense => {
                    levels.push(TreeLevel::Dense);
                    k += 1;
                }
                LevelKind::Compressed if level.ordered => {
                    // A non-unique compressed level heads coordinates: the
                    // singletons below it, up to the first unique one.
                    let mut rank = 1;
                    let mut unique = level.unique;
                    while !unique {
                        match all.get(k + rank).map(|l| l.level) {
                            Some(s) if s.kind == LevelKind::Singleton && s.ordered => {
                                unique = s.unique;
                                rank += 1;
                            }
                            _ => return refuse(k, "a compressed level with repeated coordinates not followed by singletons down to a unique one".into()),
                        }
                    }
                    levels.push(TreeLevel::Sparse { rank });
                    k += rank;
                }
                _ => {
                    let what = if level.ordered { "" } else { "unordered " };
                    return refuse(k, format!("{what}{}", level.name()));
                }
            }
        }
        Ok(Layout { levels, swizzle })
    }

    /// The format tree as JSON: `{"level": "dense", "rank": 1, "subformat": …}`.
    fn tree_json(&self) -> Json {
        let mut tree = json!({ "level": "element" });
        for level in self.levels.iter().rev() {
            let (name, rank) = match level {
                TreeLevel::Dense => ("dense", 1),
                TreeLevel::Sparse { rank } => ("sparse", *rank),
            };
            tree = json!({ "level": name, "rank": rank, "subformat": tree });
        }
        tree
    }
}

/// The element type of an array, as the descriptor names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DataType {
    Int {
        signed: bool,
        bits: u32,
    },
    Float {
        bits: u32,
    },
    /// `bint8`: 8-bit integers read as booleans.
    Bool,
}

impl DataType {
    fn parse(text: &str) -> Option<DataType> {
        Some(match text {
            "uint8" => DataType::Int { signed: false, bits: 8 },
            "uint16" => DataType::Int {
                signed: false,
                bits: 16,
            },
            "uint32" => DataType::Int {
                signed: false,
                bits: 32,
            },
            "uint64" => DataType::Int {
                signed: false,
                bits: 64,
            },
            "int8" => DataType::Int { signed: true, bits: 8 },
            "int16" => DataType::Int { signed: true, bits: 16 },
            "int32" => DataType::Int { signed: true, bits: 32 },
            "int64" => DataType::Int { signed: true, bits: 64 },
            "float32" => DataType::Float { bits: 32 },
            "float64" => DataType::Float { bits: 64 },
            "bint8" => DataType::Bool,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> String {
        match self {
            DataType::Int { signed, bits } => format!("{}int{bits}", if signed { "" } else { "u" }),
            DataType::Float { bits } => format!("float{bits}"),
            DataType::Bool => "bint8".into(),
        }
    }
}

/// How the values array is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Values {
    /// One value per stored position.
    Each(DataType),
    /// `iso[…]`: one value for every stored position.
    Iso(DataType),
}

/// A stored triangle that stands for a whole matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Structure {
    General,
    /// `symmetric_lower` / `symmetric_upper`: the mirrored entry has the same value.
    Symmetric {
        lower: bool,
    },
    /// `skew_symmetric_*`: the mirrored entry has the negated value.
    SkewSymmetric {
        lower: bool,
    },
}

impl Structure {
    pub(super) fn name(self) -> &'static str {
        match self {
            Structure::General => "general",
            Structure::Symmetric { lower: true } => "symmetric_lower",
            Structure::Symmetric { lower: false } => "symmetric_upper",
            Structure::SkewSymmetric { lower: true } => "skew_symmetric_lower",
            Structure::SkewSymmetric { lower: false } => "skew_symmetric_upper",
        }
    }
}

/// What a descriptor says.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Descriptor {
    pub shape: Vec<usize>,
    pub layout: Layout,
    /// The specification's name of the format, or `None` for a tree.
    pub name: Option<String>,
    pub values: Values,
    /// The declared type of each index array, by name.
    pub index_types: Vec<(String, DataType)>,
    pub structure: Structure,
    /// Whether a `fill_value` array holds the value of unstored components.
    pub fill: bool,
}

impl Descriptor {
    /// Parses the text of the `binsparse` attribute: an object whose
    /// `binsparse` member is the descriptor (or, as some writers store it,
    /// the descriptor itself).
    pub(super) fn parse(text: &str) -> Result<Descriptor, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("the descriptor is not JSON: {e}"))?;
        let top = json.as_object().ok_or("the descriptor is not a JSON object")?;
        let d = match top.get("binsparse") {
            Some(inner) => inner.as_object().ok_or("its `binsparse` member is not an object")?,
            None => top,
        };
        let shape = d
            .get("shape")
            .ok_or("it has no `shape`")?
            .as_array()
            .ok_or("`shape` is not an array")?
            .iter()
            .map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or("`shape` holds something other than sizes")?;
        let format = d.get("format").ok_or("it has no `format`")?;
        let (layout, name, modifier) = match format {
            Json::String(name) => {
                let layout = Layout::named(name).ok_or_else(|| {
                    let known: Vec<&str> = NAMED.iter().map(|(n, _, _)| *n).collect();
                    format!("format `{name}` is not one of binsparse's ({})", known.join(", "))
                })?;
                (layout, Some(name.clone()), None)
            }
            Json::Object(tree) => {
                let (levels, modifier) = parse_tree(tree)?;
                let swizzle = tree.get("swizzle").or_else(|| d.get("swizzle"));
                let order = levels.iter().map(|l| l.rank()).sum();
                let swizzle = match swizzle {
                    Some(s) => parse_swizzle(s, order)?,
                    None => (0..order).collect(),
                };
                (Layout { levels, swizzle }, None, modifier)
            }
            _ => return Err("`format` is neither a name nor a level tree".into()),
        };
        if layout.order() != shape.len() {
            return Err(format!(
                "the format stores {} dimensions, `shape` has {}",
                layout.order(),
                shape.len()
            ));
        }
        let types = d
            .get("data_types")
            .ok_or("it has no `data_types`")?
            .as_object()
            .ok_or("`data_types` is not an object")?;
        let values_type = types
            .get("values")
            .ok_or("`data_types` has no `values`")?
            .as_str()
            .ok_or("`data_types.values` is not a string")?;
        let values = parse_values_type(values_type, modifier)?;
        let mut index_types = Vec::new();
        for (name, t) in types.iter().filter(|(n, _)| *n != "values" && *n != "fill_value") {
            let text = t
                .as_str()
                .ok_or_else(|| format!("`data_types.{name}` is not a string"))?;
            match DataType::parse(text) {
                Some(t @ DataType::Int { .. }) => index_types.push((name.clone(), t)),
                _ => return Err(format!("`{name}` has type `{text}`; index arrays hold integers")),
            }
        }
        let structure = match d.get("structure").map(|s| s.as_str()) {
            None => Structure::General,
            Some(Some("symmetric_lower")) => Structure::Symmetric { lower: true },
            Some(Some("symmetric_upper")) => Structure::Symmetric { lower: false },
            Some(Some("skew_symmetric_lower")) => Structure::SkewSymmetric { lower: true },
            Some(Some("skew_symmetric_upper")) => Structure::SkewSymmetric { lower: false },
            Some(Some(h @ ("hermitian_lower" | "hermitian_upper"))) => {
                return Err(format!(
                    "structure `{h}` needs complex values, and tessera's values are real (f64)"
                ))
            }
            Some(other) => return Err(format!("`structure` {other:?} is not one binsparse defines")),
        };
        if structure != Structure::General && shape.len() != 2 {
            return Err(format!(
                "structure `{}` is for matrices, the shape has {} dimensions",
                structure.name(),
                shape.len()
            ));
        }
        let fill = match d.get("fill") {
            None => false,
            Some(Json::Bool(b)) => *b,
            Some(_) => return Err("`fill` is not true or false".into()),
        };
        Ok(Descriptor {
            shape,
            layout,
            name,
            values,
            index_types,
            structure,
            fill,
        })
    }

    /// The descriptor of a tensor of `shape` stored in `layout`, with index
    /// arrays of the given types and `stored` float64 values: what the
    /// writer puts in the `binsparse` attribute.
    pub(super) fn json(
        layout: &Layout,
        shape: &[usize],
        index_types: &[(String, DataType)],
        stored: usize,
        fill: bool,
    ) -> String {
        let mut types = Map::new();
        for (name, t) in index_types {
            types.insert(name.clone(), Json::String(t.name()));
        }
        types.insert("values".into(), Json::String("float64".into()));
        let mut d = Map::new();
        d.insert("version".into(), json!("0.1"));
        match layout.name() {
            Some(name) => {
                d.insert("format".into(), json!(name));
            }
            None => {
                let mut tree = layout.tree_json();
                if layout.swizzle.iter().enumerate().any(|(d, &m)| d != m) {
                    tree["swizzle"] = json!(layout.swizzle);
                }
                d.insert("format".into(), tree);
            }
        }
        d.insert("shape".into(), json!(shape));
        d.insert("number_of_stored_values".into(), json!(stored));
        if fill {
            d.insert("fill".into(), json!(true));
            types.insert("fill_value".into(), Json::String("float64".into()));
        }
        d.insert("data_types".into(), Json::Object(types));
        let top = json!({ "binsparse": Json::Object(d) });
        serde_json::to_string_pretty(&top).expect("a JSON value prints")
    }
}

/// A value modifier written as a level around the element level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    Iso,
    Complex,
}

/// The levels of a format tree down to its element level, and a value
/// modifier level around the element, if any.
fn parse_tree(tree: &Map<String, Json>) -> Result<(Vec<TreeLevel>, Option<Modifier>), String> {
    let mut levels = Vec::new();
    let mut node = tree;
    let mut modifier = None;
    loop {
        let kind = node
            .get("level")
            .and_then(Json::as_str)
            .ok_or("a level of the format has no `level` name")?;
        let rank = || -> Result<usize, String> {
            let rank = node
                .get("rank")
                .and_then(Json::as_u64)
                .ok_or_else(|| format!("the {kind} level has no `rank`"))?;
            if rank == 0 {
                return Err(format!("the {kind} level has rank 0"));
            }
            usize::try_from(rank).map_err(|_| format!("the {kind} level's rank {rank} is too large"))
        };
        match kind {
            "element" => return Ok((levels, modifier)),
            "dense" => {
                // A dense level of rank r is r dense dimensions, row-major.
                levels.extend(std::iter::repeat_n(TreeLevel::Dense, rank()?));
            }
            "sparse" => levels.push(TreeLevel::Sparse { rank: rank()? }),
            "iso" => modifier = Some(Modifier::Iso),
            "complex" => modifier = Some(Modifier::Complex),
            other => {
                return Err(format!(
                    "level `{other}` is not one binsparse defines (element, dense, sparse, iso, complex)"
                ))
            }
        }
        node = node
            .get("subformat")
            .and_then(Json::as_object)
            .ok_or_else(|| format!("the {kind} level has no `subformat`"))?;
    }
}

fn parse_swizzle(json: &Json, order: usize) -> Result<Vec<usize>, String> {
    let swizzle: Vec<usize> = json
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_u64().and_then(|v| usize::try_from(v).ok()))
                .collect()
        })
        .ok_or("`swizzle` is not an array of dimensions")?;
    let mut seen = vec![false; order];
    let is_permutation = swizzle.len() == order
        && swizzle
            .iter()
            .all(|&m| m < order && !std::mem::replace(&mut seen[m], true));
    if !is_permutation {
        return Err(format!(
            "`swizzle` {swizzle:?} is not a permutation of the {order} dimensions"
        ));
    }
    Ok(swizzle)
}

fn parse_values_type(text: &str, modifier: Option<Modifier>) -> Result<Values, String> {
    let complex = || {
        Err(format!(
            "values of type `{text}` are complex, and tessera's values are real (f64)"
        ))
    };
    let (inner, iso) = match text.strip_prefix("iso[").and_then(|t| t.strip_suffix(']')) {
        Some(inner) => (inner, true),
        None => (text, modifier == Some(Modifier::Iso)),
    };
    if inner.starts_with("complex[") || modifier == Some(Modifier::Complex) {
        return complex();
    }
    let t = DataType::parse(inner).ok_or_else(|| format!("values type `{text}` is not one binsparse defines"))?;
    Ok(if iso { Values::Iso(t) } else { Values::Each(t) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_formats_are_their_trees() {
        for (name, _, _) in NAMED {
            let layout = Layout::named(name).unwrap();
            let tree = Descriptor::parse(&format!(
                r#"{{"binsparse": {{"format": {}, "shape": [3, 4], "data_types": {{"values": "float64"}}}}}}"#,
                layout.tree_json_with_swizzle()
            ));
            if layout.order() == 2 {
                assert_eq!(tree.unwrap().layout, layout, "{name}");
            }
        }
    }

    impl Layout {
        fn tree_json_with_swizzle(&self) -> Json {
            let mut tree = self.tree_json();
            tree["swizzle"] = json!(self.swizzle);
            tree
        }
    }

    #[test]
    fn formats_map_to_layouts_and_back() {
        for format in [
            Format::csr(),
            Format::csc(),
            Format::dcsr(),
            Format::dcsc(),
            Format::coo(2),
            Format::coo_ordered(&[1, 0]),
            Format::dense(2),
            Format::dense_ordered(&[1, 0]),
            Format::sparse_vector(),
            Format::dense(1),
            Format::csf(3),
            Format::coo(3),
            Format::from_levels(
                &[LevelFormat::dense(), LevelFormat::compressed(), LevelFormat::dense()],
                &[2, 0, 1],
            )
            .unwrap(),
        ] {
            let layout = Layout::of_format(&format).unwrap();
            assert_eq!(layout.format().unwrap(), format, "{format}");
        }
        let names: Vec<_> = [
            Format::csr(),
            Format::csc(),
            Format::dcsc(),
            Format::coo(2),
            Format::dense(1),
        ]
        .iter()
        .map(|f| Layout::of_format(f).unwrap().name())
        .collect();
        assert_eq!(
            names,
            [Some("CSR"), Some("CSC"), Some("DCSC"), Some("COOR"), Some("DVEC")]
        );
        assert_eq!(Layout::of_format(&Format::csf(3)).unwrap().name(), None);
    }

    #[test]
    fn formats_binsparse_cannot_store_are_refused_with_the_level() {
        let cases = [
            (Format::dia(), "level 0 is"),
            (Format::ell(), "level 0 is"),
            (Format::bcsr(2, 2).unwrap(), "over part of a mode"),
            (Format::hash_rows(), "level 1 is unordered hashed"),
            (Format::coo_unordered(2), "level 0 is unordered compressed"),
        ];
        for (format, says) in cases {
            let err = Layout::of_format(&format).unwrap_err();
            assert!(err.contains(says) && err.contains("convert to csr"), "{format}: {err}");
        }
    }

    #[test]
    fn descriptors_with_faults_say_what_is_wrong() {
        let with = |d: &str| Descriptor::parse(d).unwrap_err();
        let base = |extra: &str| {
            format!(
                r#"{{"binsparse": {{"format": "CSR", "shape": [2, 2], "data_types": {{"values": "float64"{extra}}}}}}}"#
            )
        };
        assert!(with("[1]").contains("not a JSON object"));
        assert!(with("{").contains("not JSON"));
        assert!(with(r#"{"binsparse": {"format": "CSR", "data_types": {}}}"#).contains("no `shape`"));
        assert!(
            with(r#"{"binsparse": {"format": "XYZ", "shape": [1], "data_types": {}}}"#)
                .contains("`XYZ` is not one of binsparse's")
        );
        assert!(
            with(r#"{"binsparse": {"format": "CSR", "shape": [1], "data_types": {"values": "float64"}}}"#)
                .contains("stores 2 dimensions, `shape` has 1")
        );
        assert!(with(&base(r#", "indices_1": "float32""#)).contains("index arrays hold integers"));
        assert!(with(&base("").replace("float64", "complex[float64]")).contains("complex"));
        assert!(with(&base("").replace("float64", "float16")).contains("`float16` is not one"));
        assert!(with(&base("").replace(
            "\"CSR\"",
            r#"{"level": "dense", "rank": 2, "subformat": {"level": "element"}, "swizzle": [0, 0]}"#
        ))
        .contains("not a permutation"));
        assert!(with(&base("").replace("\"CSR\"", r#"{"level": "dense", "rank": 2}"#)).contains("no `subformat`"));
        assert!(with(&base("").replace("\"shape\"", r#""structure": "hermitian_lower", "shape""#)).contains("complex"));
    }

    /// Descriptors with characters replaced or cut short at random parse
    /// or are refused, never panic.
    #[test]
    fn mangled_descriptors_never_panic() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let valid = r#"{"binsparse": {"format": {"level": "sparse", "rank": 2, "subformat": {"level": "iso", "subformat": {"level": "element"}}},
            "swizzle": [1, 0], "shape": [3, 4], "structure": "symmetric_lower", "fill": true,
            "data_types": {"indices_0": "uint64", "indices_1": "int8", "values": "iso[float32]"}}}"#;
        assert!(Descriptor::parse(valid).is_ok());
        let alphabet = br#"{}[]":,0123456789-eE.abcdefghijklmnopqrstuvwxyz_ "#;
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..20_000 {
            let mut bytes = valid.as_bytes().to_vec();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..bytes.len());
                bytes[at] = alphabet[rng.random_range(0..alphabet.len())];
            }
            bytes.truncate(rng.random_range(bytes.len() / 2..=bytes.len()));
            let _ = Descriptor::parse(&String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn iso_complex_and_structure_are_read() {
        let d = Descriptor::parse(
            r#"{"binsparse": {"format": "COO", "shape": [5, 5], "structure": "symmetric_lower",
                "data_types": {"indices_0": "uint64", "indices_1": "int32", "values": "iso[int8]"}}}"#,
        )
        .unwrap();
        assert_eq!(d.values, Values::Iso(DataType::Int { signed: true, bits: 8 }));
        assert_eq!(d.structure, Structure::Symmetric { lower: true });
        assert_eq!(d.index_types.len(), 2);
        assert_eq!(d.layout.format().unwrap(), Format::coo(2));
    }

    #[test]
    fn the_written_descriptor_reads_back() {
        let layout = Layout::of_format(&Format::csf(3)).unwrap();
        let types = vec![(
            "pointers_to_1".to_string(),
            DataType::Int {
                signed: false,
                bits: 32,
            },
        )];
        let text = Descriptor::json(&layout, &[2, 3, 4], &types, 7, true);
        let d = Descriptor::parse(&text).unwrap();
        assert_eq!(
            (d.layout, d.shape, d.fill, d.index_types),
            (layout, vec![2, 3, 4], true, types)
        );
        let csc = Descriptor::json(&Layout::of_format(&Format::csc()).unwrap(), &[2, 3], &[], 0, false);
        assert!(csc.contains(r#""format": "CSC""#), "{csc}");
    }
}
