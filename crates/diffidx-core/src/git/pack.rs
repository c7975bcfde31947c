//! Objects written in memory, put on disk as one pack.
//!
//! A long index run writes a note blob per commit; as loose objects that is
//! a file each (up to 0.7 ms to create on ext4) and a repack later. Kept in
//! memory until the notes commit is written, they go to `objects/pack` as
//! one pack with its index, through `gix_pack`: the same objects, ids and
//! contents, as `git` would read from a repack.
//!
//! The blobs are compressed as the pack will hold them and their bytes go
//! to a file until then ([`Blobs`]): a batch's notes are held until its
//! notes commit, and raw they took about 19 MiB of App-vNext/Polly's peak,
//! compressed in memory 13. The few objects the notes tree needs to read
//! back (its trees) stay in `gix`'s object memory.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use gix::ObjectId;

use gix::odb::memory::Storage;
use gix_pack as pack;

use crate::error::{Error, Result};

/// Blobs written for a pack and not yet in one, compressed as the pack
/// will hold them, and readable back until then. Their compressed bytes are
/// in a file of their own (deleted when closed), the rest in memory.
pub struct Blobs {
    /// Each blob's pack entry, without its bytes.
    entries: Vec<pack::data::output::Entry>,
    /// The length of each entry's bytes; they follow one another in `spool`.
    lengths: Vec<usize>,
    /// Where each entry's bytes start in `spool`.
    starts: Vec<u64>,
    at: HashMap<ObjectId, usize>,
    /// Where the spool is made, at the first blob.
    dir: PathBuf,
    /// Written through a buffer (a note is a few KiB; a write each cost a
    /// 5,000-commit backfill 50 ms), flushed before a blob is read back.
    spool: Option<std::io::BufWriter<std::fs::File>>,
    spooled: u64,
}

impl Default for Blobs {
    fn default() -> Blobs {
        Blobs::in_dir(std::env::temp_dir())
    }
}

impl Blobs {
    /// Blobs whose bytes wait in a file made in `dir` (the repository's
    /// pack directory, so not in a temporary directory held in memory).
    pub fn in_dir(dir: PathBuf) -> Blobs {
        Blobs {
            entries: Vec::new(),
            lengths: Vec::new(),
            starts: Vec::new(),
            at: HashMap::new(),
            dir,
            spool: None,
            spooled: 0,
        }
    }

    /// Adds the blob of `data` (once, however often it is added); its id.
    pub fn add(&mut self, hash: gix::hash::Kind, data: &[u8]) -> Result<ObjectId> {
        let failed = |reason: String| Error::Object {
            id: format!("a blob of {} bytes", data.len()),
            reason,
        };
        let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, data)
            .map_err(|e| failed(e.to_string()))?;
        if self.at.contains_key(&id) {
            return Ok(id);
        }
        let mut entry = compressed(id, gix::objs::Kind::Blob, data, hash)?;
        let spool = match &mut self.spool {
            Some(spool) => spool,
            None => self.spool.insert(std::io::BufWriter::new(
                std::fs::create_dir_all(&self.dir)
                    .and_then(|()| tempfile::tempfile_in(&self.dir))
                    .map_err(|e| {
                        failed(format!("cannot make a file in {}: {e}", self.dir.display()))
                    })?,
            )),
        };
        spool
            .write_all(&entry.compressed_data)
            .map_err(|e| failed(e.to_string()))?;
        let bytes = std::mem::take(&mut entry.compressed_data);
        self.at.insert(id, self.entries.len());
        self.entries.push(entry);
        self.starts.push(self.spooled);
        self.lengths.push(bytes.len());
        self.spooled += bytes.len() as u64;
        Ok(id)
    }

    /// The size of blob `id`, if it is here.
    pub fn size(&self, id: &ObjectId) -> Option<u64> {
        let entry = &self.entries[*self.at.get(id)?];
        Some(entry.decompressed_size as u64)
    }

    /// The bytes of blob `id`, if it is here.
    pub fn read(&mut self, id: &ObjectId) -> Option<Result<Vec<u8>>> {
        let at = *self.at.get(id)?;
        let size = self.entries[at].decompressed_size;
        let inflated = self.spooled_bytes(at).and_then(|compressed| {
            let mut bytes = vec![0; size];
            let (_, _, written) = gix::zlib::Inflate::default()
                .once(&compressed, &mut bytes)
                .map_err(|e| e.to_string())?;
            if written == bytes.len() {
                Ok(bytes)
            } else {
                Err(format!("{written} of {} bytes inflated", bytes.len()))
            }
        });
        Some(inflated.map_err(|reason| Error::Object {
            id: id.to_string(),
            reason,
        }))
    }

    /// The compressed bytes of entry `at`, read back from the spool, whose
    /// end the next blob is written at again.
    fn spooled_bytes(&mut self, at: usize) -> std::result::Result<Vec<u8>, String> {
        let mut bytes = vec![0; self.lengths[at]];
        if bytes.is_empty() {
            return Ok(bytes);
        }
        let spool = self.spool.as_mut().ok_or("its bytes were not written")?;
        spool.flush().map_err(|e| e.to_string())?;
        let mut file = spool.get_ref();
        file.seek(SeekFrom::Start(self.starts[at]))
            .and_then(|_| file.read_exact(&mut bytes))
            .and_then(|()| file.seek(SeekFrom::End(0)))
            .map_err(|e| e.to_string())?;
        Ok(bytes)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries with their bytes, a chunk of up to `chunk` at a time, read
    /// from the spool in the order they were added; a read that fails ends
    /// the chunks and is left in `failure`.
    fn into_chunks(
        self,
        chunk: usize,
        failure: &std::cell::RefCell<Option<std::io::Error>>,
    ) -> impl Iterator<Item = Vec<pack::data::output::Entry>> + '_ {
        let mut spool = match self.spool.map(std::io::BufWriter::into_inner).transpose() {
            Ok(spool) => spool.map(std::io::BufReader::new),
            Err(e) => {
                *failure.borrow_mut() = Some(e.into_error());
                None
            }
        };
        if let Some(spool) = &mut spool {
            if let Err(e) = spool.seek(SeekFrom::Start(0)) {
                *failure.borrow_mut() = Some(e);
            }
        }
        let mut rest = self.entries.into_iter().zip(self.lengths);
        std::iter::from_fn(move || {
            if failure.borrow().is_some() {
                return None;
            }
            let mut entries = Vec::with_capacity(chunk);
            for (mut entry, length) in rest.by_ref().take(chunk) {
                let mut bytes = vec![0; length];
                if length > 0 {
                    let read = match &mut spool {
                        Some(spool) => spool.read_exact(&mut bytes),
                        None => Err(std::io::ErrorKind::NotFound.into()),
                    };
                    if let Err(e) = read {
                        *failure.borrow_mut() = Some(e);
                        return None;
                    }
                }
                entry.compressed_data = bytes;
                entries.push(entry);
            }
            (!entries.is_empty()).then_some(entries)
        })
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
    pack::data::output::Entry::from_data(
        &count,
        &gix::objs::Data::new(data, kind, hash),
        gix::zlib::Compression::BEST_SPEED,
    )
    .map_err(|e| Error::Object {
        id: id.to_string(),
        reason: e.to_string(),
    })
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
    let mut trees = Vec::with_capacity(objects.len());
    for (id, (kind, data)) in objects.iter() {
        trees.push(compressed(*id, *kind, data, hash)?);
    }
    let count = u32::try_from(total).map_err(|e| failed(e.to_string()))?;
    let directory = repo.objects.store_ref().path().join("pack");
    // The pack's bytes go to a file beside where it will be, not to memory,
    // and the blobs' bytes are read back a chunk at a time, each dropped
    // once written: the notes commit runs beside the store's load, and a
    // pack in memory grew by doubling to up to twice the notes' bytes
    // (App-vNext/Polly: 16 MiB more at the load's start than the entries).
    let mut spool = tempfile::tempfile_in(&directory).map_err(|e| failed(e.to_string()))?;
    let unread = std::cell::RefCell::new(None);
    {
        let chunks = blobs
            .into_chunks(ENTRIES_PER_CHUNK, &unread)
            .chain((!trees.is_empty()).then_some(trees))
            .map(Ok);
        let mut out = std::io::BufWriter::new(&mut spool);
        let mut writer = pack::data::output::bytes::FromEntriesIter::new(
            chunks,
            &mut out,
            count,
            pack::data::Version::V2,
            hash,
        );
        for written in &mut writer {
            if let Err(e) = written {
                // Chunks cut short by a failed read: that failure is why.
                return Err(failed(match unread.take() {
                    Some(unread) => format!("cannot read the notes back: {unread}"),
                    None => e.to_string(),
                }));
            }
        }
        if let Some(unread) = unread.take() {
            return Err(failed(format!("cannot read the notes back: {unread}")));
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
    fn a_held_blob_keeps_its_compressed_bytes_in_the_spool_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut blobs = Blobs::in_dir(dir.path().to_owned());
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_le_bytes())
            .collect();
        let small = b"{\"note\":1}\n".to_vec();
        let id = blobs.add(gix::hash::Kind::Sha1, &data).unwrap();
        let small_id = blobs.add(gix::hash::Kind::Sha1, &small).unwrap();
        assert_eq!(blobs.add(gix::hash::Kind::Sha1, &data).unwrap(), id);
        assert_eq!(blobs.entries.len(), 2, "a blob added twice is held once");
        for entry in &blobs.entries {
            assert_eq!(entry.compressed_data.capacity(), 0, "no bytes in memory");
        }
        assert!(blobs.spooled > 64 * 1024, "{}", blobs.spooled);
        assert_eq!(blobs.read(&id).unwrap().unwrap(), data);
        let spool = blobs.spool.as_ref().unwrap().get_ref();
        assert_eq!(spool.metadata().unwrap().len(), blobs.spooled);
        assert_eq!(blobs.read(&small_id).unwrap().unwrap(), small);
        assert_eq!(blobs.size(&id), Some(data.len() as u64));
        // Read back in between, then added to: the next blob still goes last.
        let third = blobs.add(gix::hash::Kind::Sha1, b"third\n").unwrap();
        assert_eq!(blobs.read(&third).unwrap().unwrap(), b"third\n");
        assert_eq!(blobs.read(&id).unwrap().unwrap(), data);
        // The spool is in the directory given, and unnamed (on Windows, a
        // file deleted when closed stays listed until then).
        if cfg!(unix) {
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
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
