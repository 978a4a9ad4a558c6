//! The learned part of reading a reply: a multinomial logistic regression
//! (softmax) over the features of `features`, trained on labelled real
//! replies. Its probability is the confidence a reading carries.
//!
//! The optimiser is a few dozen lines here rather than a crate: the data are
//! a few hundred sparse samples, full-batch gradient descent converges in a
//! second, and it is deterministic to the bit (no random initialisation, no
//! threads), so `perfbot train-intents` always writes the same weights file.
//! linfa-logistic would bring ndarray and argmin and a dense matrix of
//! samples × features for no gain at this size.

use std::collections::{BTreeMap, HashMap};

use super::features::Features;
use super::intent::Intent;

/// The weights trained on the labelled real replies in the repository
/// (`perfbot train-intents`), built in.
const BUILTIN: &str = include_str!("../../rules/intents.model");

/// The built-in model, read on first use (`None` if the file is empty).
pub fn builtin() -> Option<&'static Model> {
    static M: std::sync::LazyLock<Option<Model>> =
        std::sync::LazyLock::new(|| Model::from_text(BUILTIN).ok().filter(|m| !m.is_empty()));
    M.as_ref()
}

/// The classes, in `Intent::ALL` order.
const K: usize = Intent::ALL.len();

/// A trained model.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Feature name → row of `weights`.
    index: HashMap<String, usize>,
    /// Rows of `K` weights, one row per feature.
    weights: Vec<[f64; K]>,
    /// What it was trained on, for people.
    pub about: String,
}

/// One labelled sample: its features and how much each intent is right
/// (the label, and a little for defensible second readings).
#[derive(Debug, Clone)]
pub struct Sample {
    pub features: Features,
    pub target: [f64; K],
    pub weight: f64,
}

/// Training settings.
#[derive(Debug, Clone, Copy)]
pub struct Train {
    /// L2 penalty per weight.
    pub l2: f64,
    pub iterations: usize,
    pub learning_rate: f64,
    /// Features seen in fewer samples are left out (noise, and size).
    pub min_count: usize,
}

impl Default for Train {
    fn default() -> Self {
        Train {
            l2: 0.003,
            iterations: 600,
            learning_rate: 0.8,
            min_count: 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("line {line}: {why}")]
    Line { line: usize, why: String },
    #[error("not a perfbot intent model (no header)")]
    Header,
}

/// The target distribution for a label with its alternatives.
pub fn target(label: Intent, alt: &[Intent]) -> [f64; K] {
    let mut t = [0.0; K];
    let pos = |i: Intent| {
        Intent::ALL
            .iter()
            .position(|x| *x == i)
            .expect("all intents")
    };
    if alt.is_empty() {
        t[pos(label)] = 1.0;
    } else {
        t[pos(label)] = 0.75;
        for a in alt {
            t[pos(*a)] += 0.25 / alt.len() as f64;
        }
    }
    t
}

fn softmax(z: &mut [f64; K]) {
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for v in z.iter_mut() {
        *v = (*v - m).exp();
        sum += *v;
    }
    for v in z.iter_mut() {
        *v /= sum;
    }
}

impl Model {
    /// Probability of each intent (in `Intent::ALL` order).
    pub fn predict(&self, f: &Features) -> [f64; K] {
        let mut z = [0.0; K];
        for (name, v) in f {
            if let Some(&row) = self.index.get(name) {
                for (k, w) in self.weights[row].iter().enumerate() {
                    z[k] += w * v;
                }
            }
        }
        softmax(&mut z);
        z
    }

    /// Probability of one intent.
    pub fn probability(p: &[f64; K], i: Intent) -> f64 {
        Intent::ALL
            .iter()
            .position(|x| *x == i)
            .map_or(0.0, |k| p[k])
    }

    /// How likely the reply decides something, whatever it decides: the
    /// probability of the decisive intents, summed.
    pub fn decision_probability(&self, f: &Features) -> f64 {
        let p = self.predict(f);
        Intent::ALL
            .iter()
            .filter(|i| i.is_decisive())
            .map(|&i| Self::probability(&p, i))
            .sum()
    }

    /// Fit a model to `samples`.
    pub fn train(samples: &[Sample], opts: Train) -> Model {
        // The features seen often enough, in sorted order (reproducible).
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for s in samples {
            for k in s.features.keys() {
                *count.entry(k.as_str()).or_default() += 1;
            }
        }
        let names: Vec<&str> = count
            .iter()
            .filter(|(k, c)| **c >= opts.min_count || **k == "bias")
            .map(|(k, _)| *k)
            .collect();
        let index: HashMap<String, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i))
            .collect();
        // Samples as (row, value) lists.
        let rows: Vec<Vec<(usize, f64)>> = samples
            .iter()
            .map(|s| {
                s.features
                    .iter()
                    .filter_map(|(k, v)| index.get(k).map(|&r| (r, *v)))
                    .collect()
            })
            .collect();
        let total: f64 = samples.iter().map(|s| s.weight).sum::<f64>().max(1e-9);
        let mut w = vec![[0.0f64; K]; names.len()];
        let mut grad = vec![[0.0f64; K]; names.len()];
        for _ in 0..opts.iterations {
            for g in grad.iter_mut() {
                *g = [0.0; K];
            }
            for (s, row) in samples.iter().zip(&rows) {
                let mut z = [0.0; K];
                for &(r, v) in row {
                    for k in 0..K {
                        z[k] += w[r][k] * v;
                    }
                }
                softmax(&mut z);
                for &(r, v) in row {
                    for k in 0..K {
                        grad[r][k] += s.weight * (z[k] - s.target[k]) * v / total;
                    }
                }
            }
            for (wr, gr) in w.iter_mut().zip(&grad) {
                for k in 0..K {
                    wr[k] -= opts.learning_rate * (gr[k] + opts.l2 * wr[k]);
                }
            }
        }
        Model {
            index,
            weights: w,
            about: format!(
                "{} samples, {} features, l2 {}, {} iterations",
                samples.len(),
                names.len(),
                opts.l2,
                opts.iterations
            ),
        }
    }

    /// The weights as text: a header, then one feature a line.
    pub fn to_text(&self) -> String {
        let mut rows: Vec<(&String, &usize)> = self.index.iter().collect();
        rows.sort();
        let mut out = String::new();
        out.push_str("# perfbot intent model 1\n");
        out.push_str(&format!("# {}\n", self.about));
        out.push_str("# classes:");
        for i in Intent::ALL {
            out.push(' ');
            out.push_str(i.as_str());
        }
        out.push('\n');
        for (name, &r) in rows {
            let w = &self.weights[r];
            // Weights that say nothing are not written.
            if w.iter().all(|x| x.abs() < 5e-4) && name != "bias" {
                continue;
            }
            out.push_str(name);
            for x in w {
                out.push_str(&format!(" {:.4}", x));
            }
            out.push('\n');
        }
        out
    }

    /// Read weights written by `to_text`.
    pub fn from_text(text: &str) -> Result<Model, ModelError> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h.starts_with("# perfbot intent model 1") => {}
            _ => return Err(ModelError::Header),
        }
        let mut index = HashMap::new();
        let mut weights = Vec::new();
        let mut about = String::new();
        for (n, line) in lines {
            if let Some(c) = line.strip_prefix("# ") {
                if about.is_empty() && !c.starts_with("classes") {
                    about = c.to_string();
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let err = |why: String| ModelError::Line { line: n + 1, why };
            // The name may contain anything but a space; the K weights follow.
            let mut parts = line.rsplitn(K + 1, ' ');
            let mut w = [0.0; K];
            for k in (0..K).rev() {
                let v = parts
                    .next()
                    .ok_or_else(|| err(format!("{K} weights expected")))?;
                w[k] = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| err(format!("not a weight: {v:?}")))?;
            }
            let name = parts.next().ok_or_else(|| err("no feature name".into()))?;
            index.insert(name.to_string(), weights.len());
            weights.push(w);
        }
        Ok(Model {
            index,
            weights,
            about,
        })
    }

    /// How many features the model knows.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(words: &[&str], label: Intent) -> Sample {
        let mut f = Features::new();
        for w in words {
            f.insert(format!("w:{w}"), 1.0);
        }
        f.insert("bias".into(), 1.0);
        Sample {
            features: f,
            target: target(label, &[]),
            weight: 1.0,
        }
    }

    #[test]
    fn learns_separable_words_and_round_trips() {
        let data = vec![
            sample(&["revert", "it"], Intent::WillRevert),
            sample(&["revert", "now"], Intent::WillRevert),
            sample(&["expected", "fine"], Intent::NotARegression),
            sample(&["expected", "ok"], Intent::NotARegression),
            sample(&["looking", "it"], Intent::Investigating),
            sample(&["looking", "now"], Intent::Investigating),
        ];
        let m = Model::train(&data, Train::default());
        let p = m.predict(&data[0].features);
        assert!(Model::probability(&p, Intent::WillRevert) > 0.5, "{p:?}");
        let p = m.predict(&data[2].features);
        assert!(
            Model::probability(&p, Intent::NotARegression) > 0.5,
            "{p:?}"
        );
        // Deterministic, and the text form reads back the same predictions.
        let again = Model::train(&data, Train::default());
        assert_eq!(m.to_text(), again.to_text());
        let back = Model::from_text(&m.to_text()).unwrap();
        let (a, b) = (
            m.predict(&data[4].features),
            back.predict(&data[4].features),
        );
        for k in 0..K {
            assert!((a[k] - b[k]).abs() < 1e-3);
        }
        // Unknown features and empty input are harmless.
        let p = m.predict(&Features::new());
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(Model::from_text("nonsense").is_err());
        assert!(Model::from_text("# perfbot intent model 1\nw:x 1 2\n").is_err());
    }
}
