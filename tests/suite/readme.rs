//! The user docs are tests: every `console` block of README.md runs the command it shows and
//! compares its output (`...` and `[..]` mark elisions), and the shell recipes for sharded
//! profiles run as written.  After an intended change of output, `TRYCMD=overwrite cargo test
//! --test suite readme::` rewrites the blocks.

use std::path::Path;

#[test]
fn readme_console_blocks() {
    // The golden corpus example writes into a new folder.
    let _ = std::fs::remove_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus"));
    trycmd::TestCases::new()
        .register_bin("shufflecert", Path::new(env!("CARGO_BIN_EXE_shufflecert")))
        .env("SOURCE_DATE_EPOCH", "1764547200")
        .case("README.md");
}

/// The ```sh blocks of README.md that run `shufflecert` (not `make`).
fn shell_recipes() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut recipes = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                if block.contains("shufflecert ") {
                    recipes.push(block.clone());
                }
                current = None;
            }
            (Some(block), l) => {
                block.push_str(l);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    recipes
}

#[test]
fn readme_shard_recipes_run_and_merge() {
    let recipes = shell_recipes();
    assert_eq!(recipes.len(), 2, "the xargs and the Slurm recipe");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_shufflecert"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    for (i, recipe) in recipes.iter().enumerate() {
        let dir =
            std::env::temp_dir().join(format!("shufflecert-readme-{}-{i}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A Slurm array runs the script once per task id.
        let tasks: Vec<Option<u32>> = match recipe
            .lines()
            .find_map(|l| l.strip_prefix("#SBATCH --array=0-"))
        {
            Some(last) => (0..=last.trim().parse::<u32>().unwrap())
                .map(Some)
                .collect(),
            None => vec![None],
        };
        for task in tasks {
            let mut cmd = std::process::Command::new("bash");
            cmd.arg("-ec")
                .arg(recipe)
                .current_dir(&dir)
                .env("PATH", &path);
            if let Some(t) = task {
                cmd.env("SLURM_ARRAY_TASK_ID", t.to_string());
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "recipe {i}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        if !recipe.contains("shufflecert merge") {
            let out = std::process::Command::new("bash")
                .arg("-ec")
                .arg("shufflecert merge shard-*.json --certificate profile.json")
                .current_dir(&dir)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let verify = std::process::Command::new(env!("CARGO_BIN_EXE_shufflecert"))
            .args(["verify", "profile.json"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "{}",
            String::from_utf8_lossy(&verify.stdout)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
