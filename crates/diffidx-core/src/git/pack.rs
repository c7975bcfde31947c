//! Objects written in memory, put on disk as one pack.
//!
//! A long index run writes a note blob per commit; as loose objects that is
//! a file each (up to 0.7 ms to create on ext4) and a repack later. Kept in
//! memory until the notes commit is written, they go to `objects/pack` as
//! one pack with its index, through `gix_pack`: the same objects, ids and
//! contents, as `git` would read from a repack.
//!
//! The blobs are held compressed, as the pack will hold them ([`Blobs`]):
//! a batch's notes are held until its notes commit, and raw they took
//! about 19 MiB of App-vNext/Polly's peak. The few objects the notes tree
//! needs to read back (its trees) stay in `gix`'s object memory.

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use gix::ObjectId;

use gix::odb::memory::Storage;
use gix_pack as pack;

use crate::error::{Error, Result};

/// Blobs written for a pack and not yet in one, compressed as the pack
/// will hold them, and readable back until then.
#[derive(Default)]
pub struct Blobs {
    entries: Vec<pack::data::output::Entry>,
    at: HashMap<ObjectId, usize>,
}

impl Blobs {
    /// Adds the blob of `data` (once, however often it is added); its id.
    pub fn add(&mut self, hash: gix::hash::Kind, data: &[u8]) -> Result<ObjectId> {
        let failed = |reason: String| Error::Object {
            id: format!("a blob of {} bytes", data.len()),
            reason,
        };
        let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, data)
            .map_err(|e| failed(e.to_string()))?;
        if !self.at.contains_key(&id) {
            let entry = compressed(id, gix::objs::Kind::Blob, data, hash)?;
            self.at.insert(id, self.entries.len());
            self.entries.push(entry);
        }
        Ok(id)
    }

    /// The size of blob `id`, if it is here.
    pub fn size(&self, id: &ObjectId) -> Option<u64> {
        let entry = &self.entries[*self.at.get(id)?];
        Some(entry.decompressed_size as u64)
    }

    /// The bytes of blob `id`, if it is here.
    pub fn read(&self, id: &ObjectId) -> Option<Result<Vec<u8>>> {
        let entry = &self.entries[*self.at.get(id)?];
        let mut bytes = vec![0; entry.decompressed_size];
        let inflated = gix::zlib::Inflate::default()
            .once(&entry.compressed_data, &mut bytes)
            .map_err(|e| e.to_string())
            .and_then(|(_, _, written)| {
                (written == bytes.len())
                    .then_some(())
                    .ok_or_else(|| format!("{written} of {} bytes inflated", bytes.len()))
            });
        Some(match inflated {
            Ok(()) => Ok(bytes),
            Err(reason) => Err(Error::Object {
                id: id.to_string(),
                reason,
            }),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The pack entry of one object, compressed.
fn compressed(
    id: ObjectId,
    kind: gix::objs::Kind,
    data: &[u8],
    hash: gix::hash::Kind,
) -> Result<pack::data::output::Entry> {
    let count = pack::data::output::Count::from_data(id, None);
    let mut entry = pack::data::output::Entry::from_data(
        &count,
        &gix::objs::Data::new(data, kind, hash),
        gix::zlib::Compression::BEST_SPEED,
    )
    .map_err(|e| Error::Object {
        id: id.to_string(),
        reason: e.to_string(),
    })?;
    // The compressor grows its output by doubling: up to twice the bytes
    // it holds, for as long as a run stages notes (Polly: 23 MiB held, 13
    // once shrunk).
    entry.compressed_data.shrink_to_fit();
    Ok(entry)
}

/// Entries handed to the pack writer at a time, each chunk dropped once
/// written.
const ENTRIES_PER_CHUNK: usize = 256;

/// Writes `blobs` and `objects` as one pack (and its index) into `repo`'s
/// object directory. Returns the pack's `.keep` file, which holds off `git
/// gc` until a ref names the objects: the caller removes it then.
pub fn write(repo: &gix::Repository, blobs: Blobs, objects: &Storage) -> Result<Option<PathBuf>> {
    if objects.is_empty() && blobs.is_empty() {
        return Ok(None);
    }
    let total = objects.len() + blobs.entries.len();
    let failed = |reason: String| Error::Object {
        id: format!("a pack of {total} objects"),
        reason,
    };
    let hash = repo.object_hash();
    let mut entries = blobs.entries;
    entries.reserve(objects.len());
    for (id, (kind, data)) in objects.iter() {
        entries.push(compressed(*id, *kind, data, hash)?);
    }
    let count = u32::try_from(entries.len()).map_err(|e| failed(e.to_string()))?;
    let directory = repo.objects.store_ref().path().join("pack");
    // The pack's bytes go to a file beside where it will be, not to memory,
    // and each chunk of entries is dropped once written: the notes commit
    // runs beside the store's load, and a pack in memory grew by doubling
    // to up to twice the notes' bytes (App-vNext/Polly: 16 MiB more at the
    // load's start than the entries themselves).
    let mut spool = tempfile::tempfile_in(&directory).map_err(|e| failed(e.to_string()))?;
    {
        let mut rest = entries.into_iter();
        let chunks = std::iter::from_fn(move || {
            let chunk: Vec<_> = rest.by_ref().take(ENTRIES_PER_CHUNK).collect();
            (!chunk.is_empty()).then_some(Ok(chunk))
        });
        let mut out = std::io::BufWriter::new(&mut spool);
        let mut writer = pack::data::output::bytes::FromEntriesIter::new(
            chunks,
            &mut out,
            count,
            pack::data::Version::V2,
            hash,
        );
        for written in &mut writer {
            written.map_err(|e| failed(e.to_string()))?;
        }
        out.flush().map_err(|e| failed(e.to_string()))?;
    }
    spool
        .seek(SeekFrom::Start(0))
        .map_err(|e| failed(e.to_string()))?;
    let outcome = pack::Bundle::write_to_directory(
        &mut std::io::BufReader::new(spool),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_blob_takes_the_room_of_its_compressed_bytes_and_reads_back() {
        let mut blobs = Blobs::default();
        // Compresses to more than the compressor's first buffer, so its
        // output grew at least once.
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_le_bytes())
            .collect();
        let id = blobs.add(gix::hash::Kind::Sha1, &data).unwrap();
        let entry = &blobs.entries[blobs.at[&id]];
        assert!(entry.compressed_data.len() > 64 * 1024);
        assert_eq!(
            entry.compressed_data.capacity(),
            entry.compressed_data.len()
        );
        assert_eq!(blobs.read(&id).unwrap().unwrap(), data);
        assert_eq!(blobs.size(&id), Some(data.len() as u64));
    }

    #[test]
    fn a_pack_of_more_blobs_than_one_chunk_holds_each_and_leaves_no_spool() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let mut blobs = Blobs::default();
        let notes: Vec<(ObjectId, String)> = (0..2 * ENTRIES_PER_CHUNK + 7)
            .map(|i| {
                let note = format!("{{\"note\":{i}}}\n");
                (
                    blobs.add(repo.object_hash(), note.as_bytes()).unwrap(),
                    note,
                )
            })
            .collect();
        let keep = write(&repo, blobs, &Storage::default())
            .unwrap()
            .expect("a pack");
        let reopened = gix::open(dir.path()).unwrap();
        for (id, note) in &notes {
            let object = reopened.find_object(*id).unwrap();
            assert_eq!(object.data, note.as_bytes(), "{id}");
        }
        // The pack, its index and its keep file: the spooled bytes are gone.
        let mut left: Vec<String> = std::fs::read_dir(keep.parent().unwrap())
            .unwrap()
            .map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.rsplit('.').next().unwrap().to_owned()
            })
            .collect();
        left.sort();
        assert_eq!(left, ["idx", "keep", "pack"]);
    }
}
