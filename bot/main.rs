fn main() {
    let args: Vec<String> = std::env::args().collect();
    let case = perfbot::compare::case_file::CaseFile::load(std::path::Path::new(&args[1])).unwrap();
    let rules = perfbot::compare::rules::SelectionRules::default_rules();
    print!("{}", case.table(&rules, &Default::default()).render());
}
