//! A `Runner` that records the commands and answers from a script.

use super::{CmdOutput, Runner, ServiceSpec};
use std::cell::RefCell;
use std::io;
use std::path::PathBuf;

pub enum Reply {
    Ok(&'static str),
    Fail(&'static str),
    Missing,
}

/// Commands succeed with no output unless a rule matches: a rule `p`
/// matches the command line `p` and every line starting `p `.
#[derive(Default)]
pub struct FakeRunner {
    rules: Vec<(String, Reply)>,
    calls: RefCell<Vec<String>>,
}

impl FakeRunner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn on(mut self, command: &str, reply: Reply) -> Self {
        self.rules.push((command.to_string(), reply));
        self
    }

    pub fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }
}

impl Runner for FakeRunner {
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CmdOutput> {
        let line = std::iter::once(program)
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        self.calls.borrow_mut().push(line.clone());
        let rule = self
            .rules
            .iter()
            .find(|(p, _)| line == *p || line.starts_with(&format!("{p} ")));
        let output = |success, stdout: &str, stderr: &str| CmdOutput {
            success,
            stdout: stdout.to_string(),
            stderr: stderr.to_string(),
        };
        match rule.map(|(_, reply)| reply) {
            None => Ok(output(true, "", "")),
            Some(Reply::Ok(stdout)) => Ok(output(true, stdout, "")),
            Some(Reply::Fail(stderr)) => Ok(output(false, "", stderr)),
            Some(Reply::Missing) => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }
}

pub fn plain_spec() -> ServiceSpec {
    ServiceSpec {
        id: "laptop".to_string(),
        workspace: PathBuf::from("/home/me/work"),
        exe: PathBuf::from("/usr/local/bin/gsv"),
        extra_args: vec![],
        path_env: "/usr/local/bin:/usr/bin:/bin".to_string(),
        config_dir: None,
    }
}

/// Spaces, quotes, `%`, `$`, backslashes and `;` in every path and value.
pub fn awkward_spec() -> ServiceSpec {
    ServiceSpec {
        id: "laptop 100%".to_string(),
        workspace: PathBuf::from(r#"/home/a b/it's "w" 100%$HOME\x"#),
        exe: PathBuf::from("/opt/my apps/gsv"),
        extra_args: vec!["--verbose".to_string(), ";".to_string()],
        path_env: "/usr/bin:/home/a b/bin:$X%".to_string(),
        config_dir: Some(PathBuf::from("/cfg dir/<gsv> & co")),
    }
}
