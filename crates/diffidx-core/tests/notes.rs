//! Notes written by diffidx are ordinary git notes: real git reads them, a
//! batch is one notes commit, and a concurrent update is never overwritten.

mod common;

use common::git;
use diffidx_core::git::notes::NoteBytes;
use diffidx_core::git::Repo;

fn repo_with_commits(n: usize) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    let mut shas = Vec::new();
    for i in 0..n {
        std::fs::write(dir.path().join("a.rs"), format!("fn f{i}() {{}}\n")).unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-q", "-m", &format!("c{i}")]);
        shas.push(git(dir.path(), &["rev-parse", "HEAD"]).trim().to_owned());
    }
    (dir, shas)
}

#[test]
fn a_batch_is_one_notes_commit_that_git_can_read() {
    let (dir, shas) = repo_with_commits(3);
    let repo = Repo::discover(dir.path()).unwrap();
    let mut notes = repo.notes().unwrap();
    assert_eq!(notes.tip(), None);
    for sha in &shas {
        let id = repo.resolve_commit(sha).unwrap();
        notes
            .stage(id, &format!("{{\"note\":\"{sha}\"}}\n"))
            .unwrap();
    }
    assert_eq!(notes.staged(), 3);
    let tip = notes
        .commit("index 3 commits")
        .unwrap()
        .expect("a notes commit");
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "refs/notes/diffidx"]).trim(),
        "1"
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "refs/notes/diffidx"]).trim(),
        tip.to_string()
    );
    for sha in &shas {
        let shown = git(dir.path(), &["notes", "--ref", "diffidx", "show", sha]);
        assert_eq!(shown, format!("{{\"note\":\"{sha}\"}}\n"));
    }
    // A second batch adds a commit on top, and reading sees both.
    let mut notes = repo.notes().unwrap();
    let first = repo.resolve_commit(&shas[0]).unwrap();
    notes.stage(first, "{\"note\":\"again\"}\n").unwrap();
    notes.commit("update one").unwrap();
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "refs/notes/diffidx"]).trim(),
        "2"
    );
    let reopened = Repo::discover(dir.path()).unwrap();
    let mut notes = reopened.notes().unwrap();
    assert_eq!(notes.list().unwrap().len(), 3);
    match notes.get(first, 1024).unwrap() {
        Some(NoteBytes::Read { bytes, .. }) => assert_eq!(bytes, b"{\"note\":\"again\"}\n"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        notes.get(first, 4).unwrap(),
        Some(NoteBytes::TooLarge { size: 17, .. })
    ));
}

/// Packed notes are held compressed until their notes commit, and read
/// back meanwhile; git then reads them from one pack, not loose objects.
#[test]
fn packed_notes_read_back_before_and_after_their_commit() {
    let (dir, shas) = repo_with_commits(3);
    let repo = Repo::discover(dir.path()).unwrap();
    let mut notes = repo.notes().unwrap();
    notes.pack_writes();
    let long = format!("{{\"note\":\"{}\"}}\n", "x".repeat(5000));
    let ids: Vec<_> = shas
        .iter()
        .map(|sha| repo.resolve_commit(sha).unwrap())
        .collect();
    notes.stage(ids[0], &long).unwrap();
    notes.stage(ids[1], "{\"note\":1}\n").unwrap();
    notes.stage(ids[2], "{\"note\":1}\n").unwrap(); // the same blob twice
    let loose = || {
        git(dir.path(), &["count-objects", "-v"])
            .lines()
            .find_map(|l| l.strip_prefix("count: ").map(str::to_owned))
            .unwrap()
    };
    let loose_before = loose();
    match notes.get(ids[0], 1 << 20).unwrap() {
        Some(NoteBytes::Read { bytes, .. }) => assert_eq!(bytes, long.as_bytes()),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        notes.get(ids[0], 100).unwrap(),
        Some(NoteBytes::TooLarge { size: 5012, .. })
    ));
    notes.commit("packed").unwrap().expect("a notes commit");
    assert_eq!(loose(), loose_before, "no loose object was written");
    assert_eq!(
        git(dir.path(), &["notes", "--ref", "diffidx", "show", &shas[0]]),
        long
    );
    for sha in &shas[1..] {
        let shown = git(dir.path(), &["notes", "--ref", "diffidx", "show", sha]);
        assert_eq!(shown, "{\"note\":1}\n");
    }
    git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
    match notes.get(ids[2], 1024).unwrap() {
        Some(NoteBytes::Read { bytes, .. }) => assert_eq!(bytes, b"{\"note\":1}\n"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn notes_moved_by_someone_else_are_not_overwritten() {
    let (dir, shas) = repo_with_commits(2);
    let repo = Repo::discover(dir.path()).unwrap();
    let mut notes = repo.notes().unwrap();
    let id = repo.resolve_commit(&shas[0]).unwrap();
    notes.stage(id, "mine\n").unwrap();
    // Meanwhile, another writer adds a note with git itself.
    git(
        dir.path(),
        &["notes", "--ref", "diffidx", "add", "-m", "theirs", &shas[1]],
    );
    let err = notes.commit("late").unwrap_err();
    assert!(
        matches!(err, diffidx_core::Error::NotesMoved { .. }),
        "{err}"
    );
    assert_eq!(
        git(dir.path(), &["notes", "--ref", "diffidx", "show", &shas[1]]),
        "theirs\n"
    );
}

#[test]
fn a_hostile_deeply_nested_notes_tree_is_listed_without_recursing_into_it() {
    let (dir, shas) = repo_with_commits(1);
    // A notes ref whose tree nests 20,000 directories, plus one real note.
    let deep = vec!["d"; 20_000].join("/") + "/x";
    let real = format!("{}/{}", &shas[0][..2], &shas[0][2..]);
    let stream = format!(
        "commit refs/notes/diffidx\ncommitter A <a@example.com> 1700000000 +0000\ndata 1\nn\n\
         M 100644 inline {deep}\ndata 2\nx\n\nM 100644 inline {real}\ndata 3\nok\n\n"
    );
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let repo = Repo::discover(dir.path()).unwrap();
    let listed = repo.notes().unwrap().list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].0.to_string(), shas[0]);
}

/// Opening a repository resolves no identity (read-only commands never need
/// one); the notes commit and its reflog entry both name git's committer,
/// and the reflog says what the commit message says.
#[test]
fn the_notes_commit_and_its_reflog_entry_name_the_configured_committer() {
    let (dir, shas) = repo_with_commits(1);
    git(dir.path(), &["config", "user.name", "Noter"]);
    git(dir.path(), &["config", "user.email", "noter@example.com"]);
    let repo = Repo::discover(dir.path()).unwrap();
    let mut notes = repo.notes().unwrap();
    notes
        .stage(repo.resolve_commit(&shas[0]).unwrap(), "{}\n")
        .unwrap();
    notes
        .commit("diffidx: index 1 commit")
        .unwrap()
        .expect("a commit");
    let committer = git(
        dir.path(),
        &["log", "-1", "--format=%cn <%ce>", "refs/notes/diffidx"],
    );
    assert_eq!(committer.trim(), "Noter <noter@example.com>");
    let reflog = std::fs::read_to_string(dir.path().join(".git/logs/refs/notes/diffidx")).unwrap();
    assert_eq!(reflog.lines().count(), 1, "{reflog}");
    assert!(
        reflog.contains(" Noter <noter@example.com> ")
            && reflog.ends_with("\tdiffidx: index 1 commit\n"),
        "{reflog}"
    );
}
