//! [`World::set_enabled_many`](crate::World::set_enabled_many)'s one pass over the list:
//! checking each entity and setting its enable bit go together, and an error undoes what the
//! pass stored.
//!
//! The pass keeps the enable word it is editing in a register while successive entities land
//! in it (a scan of loads and register operations only), and stores it, logging its previous
//! bits, when an entity lands elsewhere. Chunk column ticks and row marks are stamped only
//! once the whole list has been checked, so on an error the world is as before the call:
//! every logged word gets its previous bits back, newest first, and nothing else was written.

use crate::archetype::Archetype;
use crate::component::ComponentId;
use crate::entity::{Entities, Entity};
use crate::error::ComponentError;
use crate::ids::RowTicks;

/// One batch toggle of component `id` (named `component` in errors) to `enabled`.
pub(crate) struct BatchToggle<'w> {
    archetypes: &'w mut [Archetype],
    id: ComponentId,
    component: &'static str,
    enabled: bool,
    /// Every stored word that changed, in order, with its previous bits.
    edits: Vec<WordEdit>,
    /// Rows that flipped in columns keeping row marks (rare): stamped by `finish`.
    marks: Vec<RowMark>,
    /// Bits flipped so far: each stored word's difference from its bits when loaded (a word
    /// stored twice counts once per flip, as bits only move towards `enabled`).
    flipped: usize,
}

/// A stored enable word: where, and its bits before.
struct WordEdit {
    arch: u32,
    chunk: u32,
    col: u32,
    slot: u32,
    word: u32,
    was: u64,
}

/// A flipped row of a column that keeps row marks.
struct RowMark {
    arch: u32,
    chunk: u32,
    col: u32,
    r: u32,
}

/// Where a stretch of entities in one archetype is edited: `T`'s column and enable slot.
struct Place {
    arch: usize,
    col: usize,
    slot: usize,
    row_marks: bool,
}

/// The enable word being edited.
struct OpenWord {
    chunk: usize,
    word: usize,
    /// The word as loaded.
    was: u64,
    bits: u64,
}

impl OpenWord {
    /// No word open yet; closing it is a no-op.
    const NONE: Self = Self {
        chunk: usize::MAX,
        word: usize::MAX,
        was: 0,
        bits: 0,
    };
}

/// Why [`scan`] stopped, at the index it returns.
enum Stop {
    /// That entity is alive, in this archetype, in another word (or no word was open).
    Word { chunk: usize, word: usize },
    /// The list ended, or that entity is in another archetype.
    Archetype,
    /// That entity is not alive.
    Stale(Entity),
}

impl<'w> BatchToggle<'w> {
    pub(crate) fn new(
        archetypes: &'w mut [Archetype],
        id: ComponentId,
        component: &'static str,
        enabled: bool,
    ) -> Self {
        Self {
            archetypes,
            id,
            component,
            enabled,
            edits: Vec::new(),
            marks: Vec::new(),
            flipped: 0,
        }
    }

    /// Sets the bit of every entity in `entities`, stamping `T` changed at `tick` where one
    /// flipped; returns how many flipped. On an error nothing changed.
    pub(crate) fn apply(
        mut self,
        table: &Entities,
        entities: &[Entity],
        tick: u64,
    ) -> Result<usize, ComponentError> {
        let result = self.run(table, entities);
        self.finish(result, tick)
    }

    /// Checks and toggles every entity, in order; stops at the first that fails.
    fn run(&mut self, table: &Entities, entities: &[Entity]) -> Result<(), ComponentError> {
        let mut i = 0;
        // One stretch per run of entities in one archetype, its column and slot looked up
        // once; within it one `scan` per enable word.
        while let Some(&first) = entities.get(i) {
            let place = self.place(table, first)?;
            let mut open = OpenWord::NONE;
            loop {
                let arch = &self.archetypes[place.arch];
                let stop;
                (i, stop) = scan(table, entities, i, arch, &mut open, self.enabled);
                self.close(&place, &open);
                match stop {
                    Stop::Word { chunk, word } => {
                        let bits = *self.archetypes[place.arch]
                            .chunk_mut(chunk)
                            .enable_bits_mut()
                            .get_mut(place.slot)
                            .word_mut(word);
                        open = OpenWord {
                            chunk,
                            word,
                            was: bits,
                            bits,
                        };
                    }
                    Stop::Archetype => break,
                    Stop::Stale(entity) => return Err(ComponentError::NoSuchEntity(entity)),
                }
            }
        }
        Ok(())
    }

    /// The archetype of `entity`, with `T`'s column and slot there.
    fn place(&self, table: &Entities, entity: Entity) -> Result<Place, ComponentError> {
        let stale = ComponentError::NoSuchEntity(entity);
        let loc = table.locate(entity.index()).ok_or(stale)?;
        let arch = &self.archetypes[loc.archetype.index()];
        let (c, r) = arch.split_row(loc.row as usize);
        // A live slot's generation is the one in its row (the entity module's `Slot`).
        if arch.chunks()[c].entities()[r] != entity {
            return Err(stale);
        }
        let (col, slot) = arch.enable_column(Some(self.id), entity, self.component)?;
        Ok(Place {
            arch: loc.archetype.index(),
            col,
            slot,
            row_marks: arch.row_ticks(col) != RowTicks::NONE,
        })
    }

    /// Stores the open word if it changed, logging its previous bits (and, for a column
    /// keeping row marks, its flipped rows).
    fn close(&mut self, place: &Place, open: &OpenWord) {
        let diff = open.was ^ open.bits;
        if diff == 0 {
            return;
        }
        let mask = self.archetypes[place.arch]
            .chunk_mut(open.chunk)
            .enable_bits_mut()
            .get_mut(place.slot);
        *mask.word_mut(open.word) = open.bits;
        self.flipped += diff.count_ones() as usize;
        self.edits.push(WordEdit {
            arch: place.arch as u32,
            chunk: open.chunk as u32,
            col: place.col as u32,
            slot: place.slot as u32,
            word: open.word as u32,
            was: open.was,
        });
        if place.row_marks {
            let mut rest = diff;
            while rest != 0 {
                self.marks.push(RowMark {
                    arch: place.arch as u32,
                    chunk: open.chunk as u32,
                    col: place.col as u32,
                    r: (open.word * 64) as u32 + rest.trailing_zeros(),
                });
                rest &= rest - 1;
            }
        }
    }

    /// After `run`: on success stamps `T` changed where bits flipped (chunk column ticks and
    /// row marks) and returns how many flipped; on an error restores every logged word,
    /// newest first, so each ends with the bits it had before the call.
    fn finish(
        self,
        result: Result<(), ComponentError>,
        tick: u64,
    ) -> Result<usize, ComponentError> {
        let archetypes = self.archetypes;
        if let Err(error) = result {
            for edit in self.edits.iter().rev() {
                let chunk = archetypes[edit.arch as usize].chunk_mut(edit.chunk as usize);
                let mask = chunk.enable_bits_mut().get_mut(edit.slot as usize);
                *mask.word_mut(edit.word as usize) = edit.was;
            }
            return Err(error);
        }
        for edit in &self.edits {
            let chunk = archetypes[edit.arch as usize].chunk_mut(edit.chunk as usize);
            // Enabling or disabling is a change of `T`: of the flipped rows only.
            chunk.mark_changed(edit.col as usize, tick);
        }
        for m in &self.marks {
            archetypes[m.arch as usize].stamp_row_changed(
                m.chunk as usize,
                m.col as usize,
                m.r as usize,
                tick,
            );
        }
        Ok(self.flipped)
    }
}

/// Sets the bits of `entities[i..]` in the open word, kept in a register, while they are
/// alive and in it, in archetype `arch`; returns where it stopped and why. Loads and register
/// operations only, so what it reads stays in registers across entities.
#[inline(always)]
fn scan(
    table: &Entities,
    entities: &[Entity],
    mut i: usize,
    arch: &Archetype,
    open: &mut OpenWord,
    enabled: bool,
) -> (usize, Stop) {
    let a = arch.id();
    // Archetype rows `first..first + rows` are the open word's (at most 64: the chunk's last
    // word may be shorter), so a row's bit in it is one subtraction, no division (and none
    // is open yet when `rows` is 0).
    let (in_chunk, first, rows): (&[Entity], usize, usize) = match arch.chunks().get(open.chunk) {
        Some(chunk) => {
            let cap = arch.layout().capacity();
            let start = open.word * 64;
            (
                chunk.entities(),
                open.chunk * cap + start,
                (cap - start).min(64),
            )
        }
        None => (&[], 0, 0),
    };
    let mut bits = open.bits;
    let stop = loop {
        let Some(&entity) = entities.get(i) else {
            break Stop::Archetype;
        };
        let Some(loc) = table.locate(entity.index()) else {
            break Stop::Stale(entity);
        };
        if loc.archetype != a {
            break Stop::Archetype;
        }
        let bit = (loc.row as usize).wrapping_sub(first);
        if bit >= rows {
            // Checked as the first entity of the next word's scan.
            let (c, r) = arch.split_row(loc.row as usize);
            break Stop::Word {
                chunk: c,
                word: r / 64,
            };
        }
        let r = open.word * 64 + bit;
        // A live slot's generation is the one in its row (the entity module's `Slot`).
        if in_chunk.get(r) != Some(&entity) {
            break Stop::Stale(entity);
        }
        let bit = 1u64 << bit;
        bits = if enabled { bits | bit } else { bits & !bit };
        i += 1;
    };
    open.bits = bits;
    (i, stop)
}
