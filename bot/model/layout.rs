//! Which layout a report is written in: perfbot's own two, or the kernel
//! test robot's of one era. Every "which era is this?" question — the
//! template, the sign of a change, the order of a table's rows, the 2014
//! table, a patch's prefix in the tables' commit lines, the date the robot
//! changed its signs — is answered here, so a new era is one variant.

use super::bisect::PlotStyle;

/// A layout is written as its name (`"lkp-2023-08"`), in inputs and output
/// alike: `name` is the one list of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// perfbot's own: the 2014–2022 robot's row order, signed changes.
    Classic,
    /// perfbot's own, in the 2023+ robot's manner (magnitudes).
    Modern,
    /// 2014 (`[lkp]`): "Hi <Name>," / "FYI, we noticed the below changes
    /// on", `test case: <tbox>/<testcase>/<parameters>`, a `~ N%` table with
    /// `TOTAL` rows, gnuplot 4 plots, signed by an engineer.
    Lkp2014,
    /// 2017–2020: "Greeting," / "FYI, we noticed a … due to commit:", `in testcase:`.
    Lkp2018,
    /// 2021 – 2022-04: as 2018, with a footer after `---` (`0DAY/LKP+ Test
    /// Infrastructure …`; in 2022-03 also `0-DAY CI Kernel Test Service`).
    Lkp2021,
    /// 2022-05 – 2023-02: as 2018, signed `-- 0-DAY CI Kernel Test Service`.
    Lkp2022,
    /// 2022-11 – 2023-02 (oe-lkp): as 2022, with `patch subject:` and the
    /// tags as `| Reported-by:` / `| Link:`.
    Lkp2022Nov,
    /// 2023 – 2024-10: "Hello," / "kernel test robot noticed …", no config lines.
    Lkp2023,
    /// 2023-03 – 2023-05: as 2023, with the older `Link:` tag.
    Lkp2023Apr,
    /// 2023-08 – 2023-10: as 2023, one blank line fewer at the end.
    Lkp2023Aug,
    /// 2024-10 – 2024-11: `config:` and `compiler:` lines, signed changes.
    Lkp2024,
    /// 2024-11 – 2025: regressions as magnitudes (`14.7% regression`).
    Lkp2025,
    /// 2026 on: as 2025; a patch keeps its `[PATCH …] ` prefix in the
    /// tables' commit lines.
    Lkp2026,
}

/// The robot's change of 2024-11-15: from then on the "In addition" box
/// keeps a blank where a regression's minus sign was.
const BLANK_SIGN_FROM: &str = "2024-11-15";

impl Layout {
    pub const ALL: [Layout; 13] = [
        Layout::Classic,
        Layout::Modern,
        Layout::Lkp2014,
        Layout::Lkp2018,
        Layout::Lkp2021,
        Layout::Lkp2022,
        Layout::Lkp2022Nov,
        Layout::Lkp2023,
        Layout::Lkp2023Apr,
        Layout::Lkp2023Aug,
        Layout::Lkp2024,
        Layout::Lkp2025,
        Layout::Lkp2026,
    ];

    /// The name a config, `--template` or an input uses.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Classic => "classic",
            Layout::Modern => "modern",
            Layout::Lkp2014 => "lkp-2014",
            Layout::Lkp2018 => "lkp-2018",
            Layout::Lkp2021 => "lkp-2021",
            Layout::Lkp2022 => "lkp-2022",
            Layout::Lkp2022Nov => "lkp-2022-11",
            Layout::Lkp2023 => "lkp-2023",
            Layout::Lkp2023Apr => "lkp-2023-04",
            Layout::Lkp2023Aug => "lkp-2023-08",
            Layout::Lkp2024 => "lkp-2024",
            Layout::Lkp2025 => "lkp-2025",
            Layout::Lkp2026 => "lkp-2026",
        }
    }

    /// Every name, for a message saying what may be given.
    pub fn names() -> String {
        let names: Vec<&str> = Layout::ALL.iter().map(|l| l.name()).collect();
        names.join(", ")
    }

    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The layout a template stands for, by name or by a `.hbs` path's
    /// stem (`my/lkp-2023-local.hbs` is written as `lkp-2023`); `None` for a
    /// template of the operator's own.
    pub fn of_template(template: &str) -> Option<Layout> {
        let stem = std::path::Path::new(template).file_stem()?.to_str()?;
        if let Some(l) = Layout::from_name(stem) {
            return Some(l);
        }
        let year: u16 = stem.strip_prefix("lkp-")?.get(..4)?.parse().ok()?;
        // The first layout of that year, or the last one before it.
        Layout::ALL
            .into_iter()
            .rev()
            .filter(|l| l.robot_year().is_some_and(|y| y <= year))
            .max_by_key(|l| l.robot_year())
    }

    /// The year of the robot's era, for the robot's layouts.
    pub fn robot_year(self) -> Option<u16> {
        let year = self.name().strip_prefix("lkp-")?.get(..4)?;
        year.parse().ok()
    }

    pub fn is_robot(self) -> bool {
        self.robot_year().is_some()
    }

    /// The 2023+ manner: the tables do not put the test's own metrics first
    /// (the 2014–2022 robot did) and changes read as magnitudes.
    pub fn is_modern(self) -> bool {
        self == Layout::Modern || self.robot_year().is_some_and(|y| y >= 2023)
    }

    /// How the layout draws bisect plots where the input does not say: the
    /// 2014 robot's gnuplot in its 2014 mails, lkp-2020's in every other.
    pub fn plot_style(self) -> PlotStyle {
        if self.has_2014_table() {
            PlotStyle::Lkp2014
        } else {
            PlotStyle::Lkp2020
        }
    }

    /// The 2014 robot's table: 15- and 25-digit commit titles, `~ N%`
    /// spreads, `TOTAL` rows and a legend.
    pub fn has_2014_table(self) -> bool {
        self.robot_year().is_some_and(|y| y < 2017)
    }

    /// The robot's tables named a patch by its subject without the
    /// `[PATCH v3 4/4] ` prefix until 2026.
    pub fn drops_patch_prefix(self) -> bool {
        self.robot_year().is_some_and(|y| y < 2026)
    }

    /// How the "In addition" box writes a test's change: perfbot's own
    /// signed or as a magnitude, the robot's without a `+`, and from 2025's
    /// layout on with a blank in the minus sign's place — but not in the
    /// unsigned mails of late October 2024 (`date`, RFC 3339).
    pub fn box_change(self, date: Option<&str>) -> BoxChange {
        match self.robot_year() {
            Some(year) if year >= 2025 && Layout::before_blank_sign(date) => BoxChange::NoSign,
            Some(year) if year >= 2025 => BoxChange::BlankMinus,
            Some(_) => BoxChange::NoPlus,
            None if self == Layout::Modern => BoxChange::Magnitude,
            None => BoxChange::Classic,
        }
    }

    /// A "Hello," mail with `config:` lines and magnitudes, by its date
    /// (RFC 3339): 2025's layout, 2026's from that year on.
    pub fn with_config_lines(date: Option<&str>) -> Layout {
        match date {
            Some(d) if d >= "2026" => Layout::Lkp2026,
            _ => Layout::Lkp2025,
        }
    }

    /// A "Hello," mail without config lines, by its date: 2023's layout, or
    /// the one with a blank line fewer at the end of 2023-08 – 2023-10.
    pub fn without_config_lines(date: Option<&str>) -> Layout {
        match date {
            Some(d) if ("2023-08-01".."2023-11-01").contains(&d) => Layout::Lkp2023Aug,
            _ => Layout::Lkp2023,
        }
    }

    /// Whether `date` (RFC 3339) is before the robot's change of signs.
    pub fn before_blank_sign(date: Option<&str>) -> bool {
        date.is_some_and(|d| d < BLANK_SIGN_FROM)
    }
}

/// How a change is written in the "In addition" box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoxChange {
    /// perfbot's classic change text.
    Classic,
    /// `14.1%`.
    Magnitude,
    /// `-14.1%`, `9.0%`.
    NoPlus,
    /// ` 14.1%`, `9.0%`.
    BlankMinus,
    /// `14.1%`, `9.0%`.
    NoSign,
}

impl BoxChange {
    /// `signed` (`-14.1%`, `+9.0%`) as this style writes it; `Classic` and
    /// `Magnitude` are the report's own texts, given.
    pub fn write(self, signed: &str, classic: &str, magnitude: &str) -> String {
        match self {
            BoxChange::Classic => classic.to_string(),
            BoxChange::Magnitude => magnitude.to_string(),
            BoxChange::NoPlus => signed.replacen('+', "", 1),
            BoxChange::BlankMinus => signed.replacen('-', " ", 1).replacen('+', "", 1),
            BoxChange::NoSign => signed.replacen('-', "", 1).replacen('+', "", 1),
        }
    }
}

impl serde::Serialize for Layout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Layout {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Layout, D::Error> {
        let name = String::deserialize(d)?;
        Layout::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown layout `{name}`, expected one of {}",
                Layout::names()
            ))
        })
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn answers_the_era_questions() {
        use Layout as L;
        // (layout, robot year, modern, 2014 table, drops a patch's prefix)
        for (l, year, modern, t2014, drops) in [
            (L::Classic, None, false, false, false),
            (L::Modern, None, true, false, false),
            (L::Lkp2014, Some(2014), false, true, true),
            (L::Lkp2018, Some(2018), false, false, true),
            (L::Lkp2022Nov, Some(2022), false, false, true),
            (L::Lkp2023Apr, Some(2023), true, false, true),
            (L::Lkp2025, Some(2025), true, false, true),
            (L::Lkp2026, Some(2026), true, false, false),
        ] {
            assert_eq!(l.robot_year(), year, "{l}");
            assert_eq!(l.is_modern(), modern, "{l}");
            assert_eq!(l.has_2014_table(), t2014, "{l}");
            assert_eq!(l.drops_patch_prefix(), drops, "{l}");
        }
    }

    #[test]
    fn names_and_templates_round_trip() {
        for l in Layout::ALL {
            assert_eq!(Layout::from_name(l.name()), Some(l));
            assert_eq!(Layout::of_template(l.name()), Some(l));
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(json, format!("\"{}\"", l.name()));
        }
        for (template, want) in [
            ("/etc/perfbot/lkp-2023.hbs", Some(Layout::Lkp2023)),
            ("mine/lkp-2023-local.hbs", Some(Layout::Lkp2023)),
            ("lkp-2019-x.hbs", Some(Layout::Lkp2018)),
            ("mine.hbs", None),
            ("lkp-20.hbs", None),
        ] {
            assert_eq!(Layout::of_template(template), want, "{template}");
        }
    }

    #[test]
    fn tells_the_era_by_date() {
        for (date, with, without) in [
            (None, Layout::Lkp2025, Layout::Lkp2023),
            (
                Some("2023-07-31T23:00:00+00:00"),
                Layout::Lkp2025,
                Layout::Lkp2023,
            ),
            (
                Some("2023-08-01T00:00:00+00:00"),
                Layout::Lkp2025,
                Layout::Lkp2023Aug,
            ),
            (
                Some("2023-10-31T23:00:00+00:00"),
                Layout::Lkp2025,
                Layout::Lkp2023Aug,
            ),
            (
                Some("2023-11-01T00:00:00+00:00"),
                Layout::Lkp2025,
                Layout::Lkp2023,
            ),
            (
                Some("2026-01-07T00:00:00+00:00"),
                Layout::Lkp2026,
                Layout::Lkp2023,
            ),
        ] {
            assert_eq!(Layout::with_config_lines(date), with, "{date:?}");
            assert_eq!(Layout::without_config_lines(date), without, "{date:?}");
        }
    }

    #[test]
    fn writes_the_box_change_as_the_era_did() {
        for (l, date, signed, want) in [
            (Layout::Classic, None, "-14.1%", "classic"),
            (Layout::Modern, None, "-14.1%", "14.1%"),
            (Layout::Lkp2018, None, "-14.1%", "-14.1%"),
            (Layout::Lkp2018, None, "+9.0%", "9.0%"),
            (
                Layout::Lkp2025,
                Some("2024-10-28T00:00:00+00:00"),
                "-14.1%",
                "14.1%",
            ),
            (
                Layout::Lkp2025,
                Some("2025-01-02T00:00:00+00:00"),
                "-14.1%",
                " 14.1%",
            ),
            (Layout::Lkp2026, None, "+9.0%", "9.0%"),
        ] {
            let got = l.box_change(date).write(signed, "classic", "14.1%");
            assert_eq!(got, want, "{l} {date:?} {signed}");
        }
    }
}
