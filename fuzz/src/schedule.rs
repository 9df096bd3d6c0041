//! The `schedule` property: a random schedule of a random statement either
//! is refused with a schedule error (never a panic, never another kind of
//! error the unscheduled statement does not meet), or gives, on every tier,
//! the dense reference's result in the requested format, with the same
//! bits on one thread and on three.
//!
//! The statement and tensors come from the differential target's seeded
//! generators; the schedule is drawn from the same bytes: legal-looking
//! commands over the statement's variables (`reorder`, `split`, `divide`,
//! `parallelize` over threads and vector lanes, `precompute` of the
//! right-hand side or of some of its factors, `fuse` alone and with `pos` over an operand's
//! positions and their blocks, `unroll`, `bound`),
//! commands on unknown variables, factors of 0, and fragments of text.

use tessera::engine::notation::{parse_statement, Expr};
use tessera::engine::schedule::Schedule;
use tessera::engine::testing::{same_bits, Rng};
use tessera::{EngineError, EvalOptions, TierChoice};

use super::differential::{check_result, describe, engine_inputs, is_documented_refusal, reference, seeded};
use super::source::Source;

/// What a scheduled case came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Refused with a schedule error (or the engine's documented refusal).
    Refused,
    /// Ran on every tier with the reference's result.
    Ran,
}

/// Checks the scheduled case `data` decodes to.
pub fn check(data: &[u8]) -> Result<(), String> {
    run(data).map(|_| ())
}

/// Checks the scheduled case `data` decodes to, saying how it ended.
pub fn run(data: &[u8]) -> Result<Outcome, String> {
    let mut rng = Rng::from_bytes(Source::new(data).rest());
    // A statement with loops to schedule (scalars of scalars have none).
    let (case, stmt) = loop {
        let case = seeded(&mut rng)?;
        let stmt = parse_statement(&case.text).map_err(|e| format!("`{}` does not parse: {e}", case.text))?;
        if !stmt.index_vars().is_empty() || rng.percent(5) {
            break (case, stmt);
        }
    };
    let vars: Vec<String> = stmt.index_vars().iter().map(|v| v.0.clone()).collect();
    let mut tensors: Vec<String> = stmt.rhs.accesses().iter().map(|a| a.tensor.clone()).collect();
    tensors.dedup();
    let text = random_schedule(&mut rng, &vars, &tensors, &stmt.rhs);
    let fail = |what: String| Err(format!("{}\n  schedule `{text}`\n  {what}", describe(&case)));
    let schedule: Schedule = match super::catch("the schedule parser", || text.parse::<Schedule>()) {
        Ok(Ok(s)) => s,
        Ok(Err(e @ EngineError::Schedule { .. })) => {
            report(&text, &e);
            return Ok(Outcome::Refused);
        }
        Ok(Err(e)) => return fail(format!("the parser fails with a non-schedule error: {e}")),
        Err(e) => return fail(e),
    };
    let reference = match reference(&case, &stmt) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let engine_inputs = engine_inputs(&case);
    let engine = tessera::engine();
    let mut refusal: Option<EngineError> = None;
    for tier in super::tiers(&engine) {
        let options = EvalOptions {
            output_format: case.output.clone(),
            sizes: case.sizes.clone(),
            tier: TierChoice::Named(tier.clone()),
            schedule: schedule.clone(),
            ..EvalOptions::default()
        };
        let run = |threads: Option<usize>| {
            let options = EvalOptions {
                threads,
                chunk_work: threads.map(|_| 2),
                ..options.clone()
            };
            super::catch(&format!("tier {tier}"), || {
                engine.eval_with(&case.text, &engine_inputs, &options)
            })
        };
        let result = match run(None) {
            Ok(Ok(t)) => t,
            Ok(Err(e))
                if matches!(e, EngineError::Schedule { .. } | EngineError::BoundBroken { .. })
                    || is_documented_refusal(&e) =>
            {
                if refusal.as_ref().is_some_and(|r| *r != e) {
                    return fail(format!("tiers refuse it differently: {e}"));
                }
                report(&text, &e);
                refusal = Some(e);
                continue;
            }
            Ok(Err(e)) => return fail(format!("tier {tier} fails with a non-schedule error: {e}")),
            Err(e) => return fail(e),
        };
        if let Err(e) = check_result(&result, &reference, case.output.as_ref(), case.tolerance()) {
            return fail(format!("tier {tier}: {e}"));
        }
        match (run(Some(1)), run(Some(3))) {
            (Ok(Ok(one)), Ok(Ok(three))) if same_bits(&one, &three) => {}
            (Ok(Ok(_)), Ok(Ok(_))) => return fail(format!("tier {tier}: 3 threads give other bits than one")),
            (Err(e), _) | (_, Err(e)) => return fail(e),
            (Ok(Err(e)), _) | (_, Ok(Err(e))) => return fail(format!("tier {tier} in chunks fails: {e}")),
        }
        if refusal.is_some() {
            return fail(format!("tier {tier} runs what another tier refused"));
        }
    }
    Ok(if refusal.is_some() {
        Outcome::Refused
    } else {
        Outcome::Ran
    })
}

/// Prints a refusal when `TESSERA_VERBOSE` is set.
fn report(schedule: &str, e: &EngineError) {
    if std::env::var_os("TESSERA_VERBOSE").is_some() {
        eprintln!("schedule `{schedule}` refused: {e}");
    }
}

/// A schedule of one or two commands over `vars` and the statement's
/// `tensors`, legal or not.
pub fn random_schedule(rng: &mut Rng, vars: &[String], tensors: &[String], rhs: &Expr) -> String {
    let factors: Vec<String> = rhs.factors().iter().map(|f| f.to_string()).collect();
    let mut loops: Vec<String> = vars.to_vec();
    let mut commands = Vec::new();
    let pick = |rng: &mut Rng, names: &[String]| -> String {
        if names.is_empty() || rng.percent(8) {
            "q".to_string()
        } else {
            rng.pick(names).clone()
        }
    };
    for n in 0..rng.range(1, 3) {
        let command = match rng.below(22) {
            0..=5 if loops.len() >= 2 => {
                let mut order = loops.clone();
                if rng.percent(50) {
                    rng.shuffle(&mut order);
                }
                order.truncate(rng.range(2, order.len() + 1));
                format!("reorder({})", order.join(", "))
            }
            0..=11 => {
                let var = pick(rng, vars);
                let (outer, inner) = (format!("{var}{n}o"), format!("{var}{n}i"));
                let factor = if rng.percent(5) { 0 } else { rng.range(1, 9) };
                if let Some(at) = loops.iter().position(|l| *l == var) {
                    loops.splice(at..=at, [outer.clone(), inner.clone()]);
                }
                let command = if rng.percent(30) { "divide" } else { "split" };
                format!("{command}({var}, {outer}, {inner}, {factor})")
            }
            12 | 13 if rng.percent(40) => {
                // Vector lanes: usually a loop's, sometimes a position's
                // or a strategy threads do not take.
                let strategy = rng.pick(&["ignore_races", "parallel_reduction", "no_races"]);
                let unit = if rng.percent(90) { "cpu_vector" } else { "cpu_threads" };
                format!("parallelize({}, {unit}, {strategy})", pick(rng, &loops))
            }
            12..=17 => {
                let strategy = rng.pick(&["no_races", "atomics", "temporary", "ignore_races"]);
                let var = if rng.percent(60) && !loops.is_empty() {
                    loops[0].clone()
                } else {
                    pick(rng, &loops)
                };
                format!("parallelize({var}, cpu_threads, {strategy})")
            }
            18 if rng.percent(15) && loops.len() >= 2 => {
                // A fused pair alone: one loop over every pair of
                // coordinates, sometimes split or run in parallel.
                let at = rng.below(loops.len() - 1);
                let fused = format!("f{n}");
                let mut text = format!("fuse({}, {}, {fused})", loops[at], loops[at + 1]);
                if rng.percent(40) {
                    text.push_str(&format!("; split({fused}, {fused}0, {fused}1, {})", rng.range(1, 9)));
                }
                if rng.percent(30) {
                    let strategy = rng.pick(&["no_races", "atomics", "temporary"]);
                    text.push_str(&format!("; parallelize({fused}, cpu_threads, {strategy})"));
                }
                text
            }
            18 if rng.percent(50) => {
                // Positions of an operand: a fused pair of neighbouring
                // loops or one loop, often cut into blocks, sometimes
                // run in parallel.
                let tensor = if tensors.is_empty() || rng.percent(5) {
                    "Q".to_string()
                } else {
                    rng.pick(tensors).clone()
                };
                let (mut text, positions) = if loops.len() >= 2 && rng.percent(70) {
                    let at = rng.below(loops.len() - 1);
                    let fused = format!("f{n}");
                    (
                        format!(
                            "fuse({}, {}, {fused}); pos({fused}, {fused}p, {tensor})",
                            loops[at],
                            loops[at + 1]
                        ),
                        format!("{fused}p"),
                    )
                } else {
                    let var = pick(rng, &loops);
                    (format!("pos({var}, {var}{n}p, {tensor})"), format!("{var}{n}p"))
                };
                if rng.percent(80) {
                    let factor = if rng.percent(3) { 0 } else { rng.range(1, 9) };
                    let command = if rng.percent(30) { "divide" } else { "split" };
                    text.push_str(&format!(
                        "; {command}({positions}, {positions}0, {positions}1, {factor})"
                    ));
                    if rng.percent(40) {
                        let strategy = rng.pick(&["no_races", "atomics", "temporary"]);
                        text.push_str(&format!("; parallelize({positions}0, cpu_threads, {strategy})"));
                    }
                }
                text
            }
            19 if rng.percent(50) => {
                let var = pick(rng, &loops);
                format!("unroll({var}, {})", if rng.percent(3) { 0 } else { rng.range(1, 9) })
            }
            19 => {
                let var = pick(rng, vars);
                let kind = rng.pick(&["max_exact", "max_constraint", "min_exact"]);
                format!("bound({var}, {var}{n}b, {}, {kind})", rng.range(1, 12))
            }
            18 => {
                let var = pick(rng, vars);
                let renamed = if rng.percent(10) {
                    format!("{var}w")
                } else {
                    var.clone()
                };
                // The whole right-hand side, or some of its factors.
                let expr = if factors.len() > 1 && rng.percent(60) {
                    let mut some = factors.clone();
                    rng.shuffle(&mut some);
                    some.truncate(rng.range(1, factors.len()));
                    some.join(" * ")
                } else {
                    rhs.to_string()
                };
                format!("precompute({expr}, {var}, {renamed}, w)")
            }
            _ => {
                let len = rng.range(1, 16);
                (0..len)
                    .map(|_| *rng.pick(&['(', ')', ',', ';', ' ', 'i', 'j', 'k', '0', '4', 'r', 's']))
                    .collect()
            }
        };
        commands.push(command);
    }
    commands.join("; ")
}
