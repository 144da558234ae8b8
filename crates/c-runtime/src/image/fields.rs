//! The members of the program's globals by name (`queue.tail`,
//! `slots[2].seq`), from the DWARF type of each global variable: what a
//! report calls a location inside a global, where the symbol table alone
//! says `queue+8`.
//!
//! The executable's debug information is read once, on first use: every
//! global variable with a fixed address (`DW_OP_addr`, or DWARF 5's
//! `DW_OP_addrx`) and its type. A member is named only when the location
//! lies past the start of the global (a global's own name stays as it is,
//! `m` for a mutex), down to the innermost member that starts at the byte,
//! and only through members the program could name: a member reserved to
//! the implementation (`__data`, `_M_i`) ends the walk.

use addr2line::gimli;
use std::borrow::Cow;
use std::sync::OnceLock;

type Reader = gimli::EndianSlice<'static, gimli::RunTimeEndian>;

/// The program's global variables and their types.
struct Globals {
    dwarf: gimli::Dwarf<Reader>,
    units: Vec<gimli::Unit<Reader>>,
    /// (link-time address, unit, type), sorted by address.
    vars: Vec<(u64, usize, gimli::UnitOffset)>,
}

static GLOBALS: OnceLock<Option<Globals>> = OnceLock::new();

/// How deep a member path may go (a self-referential type cannot loop).
const MAX_DEPTH: usize = 16;

/// The member path (`.tail`, `[2].seq`, `.buf+3`) of the byte `offset`
/// bytes into the global at link-time address `start`, if its type is
/// known and `offset` is not 0.
pub fn member_path(start: u64, offset: u64) -> Option<String> {
    if offset == 0 {
        return None;
    }
    let g = GLOBALS.get_or_init(load).as_ref()?;
    let i = g.vars.binary_search_by_key(&start, |v| v.0).ok()?;
    let (_, unit, ty) = g.vars[i];
    walk(&g.dwarf, &g.units[unit], ty, offset)
}

/// The member path of the byte `offset` bytes into an object of type `ty`.
fn walk(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    ty: gimli::UnitOffset,
    offset: u64,
) -> Option<String> {
    let mut path = String::new();
    let mut ty = ty;
    let mut off = offset;
    // Down to the innermost member the program could name that starts at
    // the byte (`queue.slots[2].seq`, not `queue.slots[2]`).
    for _ in 0..MAX_DEPTH {
        let Ok(entry) = unit.entry(ty) else { break };
        match entry.tag() {
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_atomic_type
            | gimli::DW_TAG_restrict_type => match type_of(&entry) {
                Some(t) => ty = t,
                None => break,
            },
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type | gimli::DW_TAG_union_type => {
                let Some((name, at, member_ty)) = member_at(dwarf, unit, ty, off) else {
                    break;
                };
                if reserved(&name) {
                    break;
                }
                if !name.is_empty() {
                    path.push('.');
                    path.push_str(&name);
                }
                off -= at;
                ty = member_ty;
            }
            gimli::DW_TAG_array_type => {
                let Some(elem) = type_of(&entry) else { break };
                let size = size_of(unit, elem, 0).filter(|&s| s > 0);
                let Some(size) = size else { break };
                path.push_str(&format!("[{}]", off / size));
                off %= size;
                ty = elem;
            }
            _ => break,
        }
    }
    if path.is_empty() {
        return None;
    }
    if off > 0 {
        path.push_str(&format!("+{off}"));
    }
    Some(path)
}

/// A name reserved to the implementation (`__data`, `_M_i`).
fn reserved(name: &str) -> bool {
    name.starts_with("__") || (name.starts_with('_') && name[1..].starts_with(char::is_uppercase))
}

/// The type an entry refers to (`DW_AT_type` within its unit).
fn type_of(entry: &gimli::DebuggingInformationEntry<Reader>) -> Option<gimli::UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type).ok()?? {
        gimli::AttributeValue::UnitRef(o) => Some(o),
        _ => None,
    }
}

/// The member of the aggregate type `ty` holding byte `off`: its name
/// (empty for an anonymous one), offset and type: the last member
/// starting at or before `off`.
fn member_at(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    ty: gimli::UnitOffset,
    off: u64,
) -> Option<(String, u64, gimli::UnitOffset)> {
    let mut tree = unit.entries_tree(Some(ty)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    let mut best: Option<(String, u64, gimli::UnitOffset)> = None;
    while let Ok(Some(child)) = children.next() {
        let e = child.entry();
        if e.tag() != gimli::DW_TAG_member && e.tag() != gimli::DW_TAG_inheritance {
            continue;
        }
        // A static member (clang describes `is_always_lock_free` so) is
        // not in the object.
        if e.attr(gimli::DW_AT_declaration).ok().flatten().is_some()
            || e.attr(gimli::DW_AT_external).ok().flatten().is_some()
        {
            continue;
        }
        let at = e
            .attr_value(gimli::DW_AT_data_member_location)
            .ok()
            .flatten()
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        let Some(member_ty) = type_of(e) else {
            continue;
        };
        if at > off || best.as_ref().is_some_and(|b| b.1 > at) {
            continue;
        }
        let name = e
            .attr(gimli::DW_AT_name)
            .ok()
            .flatten()
            .and_then(|a| dwarf.attr_string(unit, a.value()).ok())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        best = Some((name, at, member_ty));
    }
    best
}

/// The size in bytes of type `ty` (following typedefs and qualifiers;
/// arrays by their element count).
fn size_of(unit: &gimli::Unit<Reader>, ty: gimli::UnitOffset, depth: usize) -> Option<u64> {
    if depth > MAX_DEPTH {
        return None;
    }
    let entry = unit.entry(ty).ok()?;
    if let Some(size) = entry
        .attr_value(gimli::DW_AT_byte_size)
        .ok()
        .flatten()
        .and_then(|v| v.udata_value())
    {
        return Some(size);
    }
    match entry.tag() {
        gimli::DW_TAG_pointer_type | gimli::DW_TAG_reference_type => Some(8),
        gimli::DW_TAG_array_type => {
            let elem = size_of(unit, type_of(&entry)?, depth + 1)?;
            let mut tree = unit.entries_tree(Some(ty)).ok()?;
            let root = tree.root().ok()?;
            let mut children = root.children();
            let mut count = 1u64;
            while let Ok(Some(child)) = children.next() {
                let e = child.entry();
                if e.tag() != gimli::DW_TAG_subrange_type {
                    continue;
                }
                let attr = |a| e.attr_value(a).ok().flatten().and_then(|v| v.udata_value());
                let n = attr(gimli::DW_AT_count)
                    .or_else(|| attr(gimli::DW_AT_upper_bound).map(|u| u + 1))?;
                count *= n;
            }
            Some(elem * count)
        }
        _ => size_of(unit, type_of(&entry)?, depth + 1),
    }
}

/// Reads the executable's debug information: its global variables.
fn load() -> Option<Globals> {
    let bytes = crate::image::symbols::executable_image()?;
    let dwarf = load_dwarf(bytes)?;
    let mut units = Vec::new();
    let mut vars = Vec::new();
    let mut headers = dwarf.units();
    while let Ok(Some(header)) = headers.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let index = units.len();
        let mut entries = unit.entries();
        while let Ok(Some((_, e))) = entries.next_dfs() {
            if e.tag() != gimli::DW_TAG_variable {
                continue;
            }
            let Some(addr) = fixed_address(&dwarf, &unit, e) else {
                continue;
            };
            // A definition of a declared variable carries its type on the
            // declaration (C++ static members, `extern` then defined).
            let ty =
                type_of(e).or_else(|| match e.attr_value(gimli::DW_AT_specification).ok()?? {
                    gimli::AttributeValue::UnitRef(o) => type_of(&unit.entry(o).ok()?),
                    _ => None,
                });
            if let Some(ty) = ty {
                vars.push((addr, index, ty));
            }
        }
        units.push(unit);
    }
    vars.sort_unstable_by_key(|v| v.0);
    vars.dedup_by_key(|v| v.0);
    Some(Globals { dwarf, units, vars })
}

/// The types a module (the executable or a shared library) defines, by
/// qualified name (`mabain::DB`): the complete definitions, with their
/// sizes.
struct Types {
    dwarf: gimli::Dwarf<Reader>,
    units: Vec<gimli::Unit<Reader>>,
    by_name: std::collections::HashMap<String, (usize, gimli::UnitOffset, u64)>,
}

/// Per module path, its types (read on first use).
static TYPES: std::sync::Mutex<Vec<(String, Option<&'static Types>)>> =
    std::sync::Mutex::new(Vec::new());

/// Member paths found so far, by module's types, unit, type and offset:
/// a program has many objects of one type, and each of their locations is
/// named when first used (walking the debug information each time cost a
/// tenth of a database's run).
type WalkKey = (usize, usize, gimli::UnitOffset, u64);
static WALKS: std::sync::Mutex<Option<std::collections::HashMap<WalkKey, Option<String>>>> =
    std::sync::Mutex::new(None);

/// The member path (`.status`, `.slots[2].seq`) of the byte `offset` bytes
/// into an object of the type named `type_name` that the module at `path`
/// defines, if its debug information describes it and the object (of
/// `block_size` bytes) can be one.
pub fn type_member_path(
    path: &str,
    type_name: &str,
    offset: u64,
    block_size: u64,
) -> Option<String> {
    let types = {
        let mut all = TYPES.lock().unwrap_or_else(|e| e.into_inner());
        match all.iter().find(|(p, _)| p == path) {
            Some((_, t)) => *t,
            None => {
                let t = load_types(path).map(|t| &*Box::leak(Box::new(t)));
                all.push((path.to_string(), t));
                t
            }
        }
    }?;
    let &(unit, ty, size) = types.by_name.get(type_name)?;
    if size > block_size || offset >= size {
        return None;
    }
    if offset == 0 {
        return Some(String::new());
    }
    let key = (types as *const Types as usize, unit, ty, offset);
    let mut walks = WALKS.lock().unwrap_or_else(|e| e.into_inner());
    (walks.get_or_insert_with(Default::default))
        .entry(key)
        .or_insert_with(|| walk(&types.dwarf, &types.units[unit], ty, offset))
        .clone()
}

/// Reads the types of the module at `path`.
fn load_types(path: &str) -> Option<Types> {
    let bytes: &'static [u8] = Box::leak(std::fs::read(path).ok()?.into_boxed_slice());
    let dwarf = load_dwarf(bytes)?;
    let mut units = Vec::new();
    let mut by_name = std::collections::HashMap::new();
    let mut headers = dwarf.units();
    while let Ok(Some(header)) = headers.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let index = units.len();
        // The enclosing namespaces and types at each depth.
        let mut scopes: Vec<(isize, String)> = Vec::new();
        let mut depth = 0isize;
        let mut entries = unit.entries();
        while let Ok(Some((delta, e))) = entries.next_dfs() {
            depth += delta;
            while scopes.last().is_some_and(|s| s.0 >= depth) {
                scopes.pop();
            }
            let tag = e.tag();
            let scope = matches!(
                tag,
                gimli::DW_TAG_namespace
                    | gimli::DW_TAG_structure_type
                    | gimli::DW_TAG_class_type
                    | gimli::DW_TAG_union_type
            );
            if !scope {
                continue;
            }
            let name = e
                .attr(gimli::DW_AT_name)
                .ok()
                .flatten()
                .and_then(|a| dwarf.attr_string(&unit, a.value()).ok())
                .map(|s| s.to_string_lossy().into_owned());
            let Some(name) = name else { continue };
            let qualified = scopes
                .iter()
                .map(|s| s.1.as_str())
                .chain([name.as_str()])
                .collect::<Vec<_>>()
                .join("::");
            let declaration = e.attr(gimli::DW_AT_declaration).ok().flatten().is_some();
            let size = e
                .attr_value(gimli::DW_AT_byte_size)
                .ok()
                .flatten()
                .and_then(|v| v.udata_value());
            if tag != gimli::DW_TAG_namespace && !declaration {
                if let Some(size) = size {
                    by_name
                        .entry(qualified.clone())
                        .or_insert((index, e.offset(), size));
                }
            }
            scopes.push((depth, name));
        }
        units.push(unit);
    }
    Some(Types {
        dwarf,
        units,
        by_name,
    })
}

/// The DWARF sections of an ELF image.
fn load_dwarf(bytes: &'static [u8]) -> Option<gimli::Dwarf<Reader>> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(bytes).ok()?;
    let section = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data: &'static [u8] = match file.section_by_name(id.name()) {
            Some(s) => match s.uncompressed_data() {
                Ok(Cow::Borrowed(b)) => b,
                Ok(Cow::Owned(v)) => Box::leak(v.into_boxed_slice()),
                Err(_) => &[],
            },
            None => &[],
        };
        Ok(gimli::EndianSlice::new(data, gimli::RunTimeEndian::Little))
    };
    gimli::Dwarf::load(section).ok()
}

/// The link-time address of a variable whose location is a fixed address.
fn fixed_address(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    e: &gimli::DebuggingInformationEntry<Reader>,
) -> Option<u64> {
    let gimli::AttributeValue::Exprloc(expr) = e.attr_value(gimli::DW_AT_location).ok()?? else {
        return None;
    };
    let mut ops = expr.operations(unit.encoding());
    match ops.next().ok()?? {
        gimli::Operation::Address { address } => Some(address),
        gimli::Operation::AddressIndex { index } => dwarf.address(unit, index).ok(),
        _ => None,
    }
}
