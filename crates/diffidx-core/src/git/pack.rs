//! Objects written in memory, put on disk as one pack.
//!
//! A long index run writes a note blob per commit; as loose objects that is
//! a file each (up to 0.7 ms to create on ext4) and a repack later. Kept in
//! memory (`gix`'s object memory) until the notes commit is written, they go
//! to `objects/pack` as one pack with its index, through `gix_pack`: the
//! same objects, ids and contents, as `git` would read from a repack.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use gix::odb::memory::Storage;
use gix_pack as pack;

use crate::error::{Error, Result};

/// Writes `objects` as one pack (and its index) into `repo`'s object
/// directory. Returns the pack's `.keep` file, which holds off `git gc`
/// until a ref names the objects: the caller removes it then.
pub fn write(repo: &gix::Repository, objects: &Storage) -> Result<Option<PathBuf>> {
    if objects.is_empty() {
        return Ok(None);
    }
    let failed = |reason: String| Error::Object {
        id: format!("a pack of {} objects", objects.len()),
        reason,
    };
    let hash = repo.object_hash();
    let mut entries = Vec::with_capacity(objects.len());
    for (id, (kind, data)) in objects.iter() {
        let count = pack::data::output::Count::from_data(*id, None);
        let entry = pack::data::output::Entry::from_data(
            &count,
            &gix::objs::Data::new(data, *kind, hash),
            gix::zlib::Compression::BEST_SPEED,
        )
        .map_err(|e| failed(e.to_string()))?;
        entries.push(entry);
    }
    let count = u32::try_from(entries.len()).map_err(|e| failed(e.to_string()))?;
    let mut bytes = Vec::new();
    {
        let mut writer = pack::data::output::bytes::FromEntriesIter::new(
            std::iter::once(Ok(entries)),
            &mut bytes,
            count,
            pack::data::Version::V2,
            hash,
        );
        for written in &mut writer {
            written.map_err(|e| failed(e.to_string()))?;
        }
    }
    let directory = repo.objects.store_ref().path().join("pack");
    let outcome = pack::Bundle::write_to_directory(
        &mut bytes.as_slice(),
        Some(&directory),
        &mut gix::progress::Discard,
        &AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        hash,
        pack::bundle::write::Options {
            thread_limit: Some(1),
            ..Default::default()
        },
    )
    .map_err(|e| failed(e.to_string()))?;
    Ok(outcome.keep_path)
}
