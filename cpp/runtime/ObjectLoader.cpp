//===- ObjectLoader.cpp - Loading kernel objects without LLVM -------------===//
//
// An object is loaded into one anonymous mapping made of three page-aligned
// groups, each protected on its own once relocations are applied:
//
//   [ code: SHF_EXECINSTR sections, call stubs ]  read + execute
//   [ read-only: other alloc sections, the GOT ]  read
//   [ writable: SHF_WRITE sections, COMMON     ]  read + write
//
// Sections keep their alignment within a group. With everything in one
// block (limited to 2 GiB), 32-bit PC-relative fields between sections always
// fit. Symbols from outside the object (the runtime's functions of
// OrderedAtomics.h, the float helpers of FloatHelpers.h, libm through dlsym)
// can be anywhere in the address space, so references to them go through a
// GOT slot holding the 64-bit address, and calls through a stub
// `jmp *slot(%rip)`. Compiler-runtime helpers ("__" names) come from the
// runtime only (FloatHelpers.h). Non-alloc sections (symbol tables, debug
// info) and the relocations applying to them are not loaded; .eh_frame, when
// present, is loaded like any alloc section but not registered (kernels never
// throw).
//
// What depends on the machine (relocation semantics, stub code) is one
// Architecture entry; x86-64 is the only one so far.
//
//===----------------------------------------------------------------------===//

#include "ObjectLoader.h"
#include "OrderedAtomics.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace adjit {
namespace runtime {
namespace {

/// A block larger than this could not keep 32-bit PC-relative fields in range.
constexpr uint64_t MaxBlockSize = uint64_t(1) << 31;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", (unsigned long long)value);
  return text;
}

/// One relocation, with every address it may use in the loaded block.
struct Relocation {
  uint32_t type;
  uint8_t *location;   // the field to patch
  uint64_t room;       // bytes from the field to the end of its section
  uint64_t place;      // P: the field's address
  uint64_t symbol;     // S: the symbol's address
  int64_t addend;      // A
  uint64_t got;        // GOT: the address of the GOT
  uint64_t slot;       // the symbol's GOT slot (G + GOT); 0 when it has none
  uint64_t callTarget; // L: the symbol's stub when it has one, else S
};

enum class Field { Signed32, Unsigned32, Bits64 };

/// Stores `value` in the relocated field, or fails if it does not fit.
bool writeField(const Relocation &r, uint64_t value, Field field,
                std::string &error) {
  unsigned bytes = field == Field::Bits64 ? 8 : 4;
  if (r.room < bytes) {
    error = "the field runs past the end of its section";
    return false;
  }
  if (field == Field::Bits64) {
    std::memcpy(r.location, &value, 8);
    return true;
  }
  bool fits = field == Field::Signed32 ? int64_t(value) == int32_t(value)
                                       : value <= UINT32_MAX;
  if (!fits) {
    error = "value " + hex(value) + " overflows the 32-bit " +
            (field == Field::Signed32 ? "signed" : "unsigned") + " field";
    return false;
  }
  uint32_t narrow = uint32_t(value);
  std::memcpy(r.location, &narrow, 4);
  return true;
}

//===-- x86-64 ------------------------------------------------------------===//

bool x86_64UsesGotSlot(uint32_t type) {
  switch (type) {
  case R_X86_64_GOT32:
  case R_X86_64_GOT64:
  case R_X86_64_GOTPLT64:
  case R_X86_64_GOTPCREL:
  case R_X86_64_GOTPCRELX:
  case R_X86_64_REX_GOTPCRELX:
  case R_X86_64_GOTPCREL64:
    return true;
  default:
    return false;
  }
}

/// Applies one relocation, with the psABI's formulas (S, A, P, G, GOT, L).
bool applyX86_64(const Relocation &r, std::string &error) {
  uint64_t S = r.symbol, A = uint64_t(r.addend), P = r.place, GOT = r.got;
  uint64_t G = r.slot - r.got, L = r.callTarget;
  switch (r.type) {
  case R_X86_64_NONE:
    return true;
  case R_X86_64_64:
    return writeField(r, S + A, Field::Bits64, error);
  case R_X86_64_PC32:
    return writeField(r, S + A - P, Field::Signed32, error);
  case R_X86_64_PLT32:
    return writeField(r, L + A - P, Field::Signed32, error);
  case R_X86_64_32:
    return writeField(r, S + A, Field::Unsigned32, error);
  case R_X86_64_32S:
    return writeField(r, S + A, Field::Signed32, error);
  case R_X86_64_PC64:
    return writeField(r, S + A - P, Field::Bits64, error);
  case R_X86_64_GOT32:
    return writeField(r, G + A, Field::Signed32, error);
  case R_X86_64_GOT64:
  case R_X86_64_GOTPLT64:
    return writeField(r, G + A, Field::Bits64, error);
  case R_X86_64_GOTPCREL:
  case R_X86_64_GOTPCRELX: // relaxing the load is optional: the slot is kept
  case R_X86_64_REX_GOTPCRELX:
    return writeField(r, G + GOT + A - P, Field::Signed32, error);
  case R_X86_64_GOTPCREL64:
    return writeField(r, G + GOT + A - P, Field::Bits64, error);
  case R_X86_64_GOTPC32:
    return writeField(r, GOT + A - P, Field::Signed32, error);
  case R_X86_64_GOTPC64:
    return writeField(r, GOT + A - P, Field::Bits64, error);
  case R_X86_64_GOTOFF64:
    return writeField(r, S + A - GOT, Field::Bits64, error);
  case R_X86_64_PLTOFF64:
    return writeField(r, L + A - GOT, Field::Bits64, error);
  default:
    error = "unsupported x86-64 relocation type " + std::to_string(r.type);
    return false;
  }
}

/// `jmp *slot(%rip)`, padded to 8 bytes with int3.
void writeX86_64Stub(uint8_t *stub, uint64_t stubAddress, uint64_t slot) {
  int32_t displacement = int32_t(slot - (stubAddress + 6));
  const uint8_t code[8] = {0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc};
  std::memcpy(stub, code, 8);
  std::memcpy(stub + 2, &displacement, 4);
}

//===-- Architectures -----------------------------------------------------===//

struct Architecture {
  uint16_t machine;
  uint64_t stubSize;
  bool (*usesGotSlot)(uint32_t type);
  bool (*apply)(const Relocation &r, std::string &error);
  void (*writeStub)(uint8_t *stub, uint64_t stubAddress, uint64_t slot);
};

const Architecture Architectures[] = {
    {EM_X86_64, 8, x86_64UsesGotSlot, applyX86_64, writeX86_64Stub},
};

//===-- Loading -----------------------------------------------------------===//

enum Group { Code, ReadOnly, Writable, NumGroups };

/// Where a section or COMMON symbol goes: an offset in one group.
struct Placement {
  int group = -1; // -1: not loaded
  uint64_t offset = 0;
};

/// One load: the object's tables (copied, since `data` may be unaligned),
/// its layout, and the block, unmapped again unless the load succeeds.
class ObjectLoad {
public:
  ObjectLoad(const void *object, size_t objectSize, std::string &message)
      : data(static_cast<const uint8_t *>(object)), size(objectSize),
        error(message) {}
  ~ObjectLoad() {
    if (block && !succeeded)
      munmap(block, blockSize);
  }

  LoadedBlock loadedBlock() const { return {block, size_t(blockSize)}; }

  bool run(const std::vector<std::string> &names,
           std::vector<uint64_t> &addresses) {
    std::vector<uint64_t> entries;
    if (!readTables() || !layOut() || !mapBlock() || !resolveSymbols() ||
        !findEntries(names, entries) || !applyRelocations() || !protect())
      return false;
    addresses = std::move(entries);
    return succeeded = true;
  }

private:
  bool fail(const std::string &message) {
    error = message;
    return false;
  }
  bool isLoaded(size_t section) const {
    return section < placements.size() && placements[section].group >= 0;
  }
  uint64_t addressOf(const Placement &p) const {
    return uint64_t(block) + groupStart[p.group] + p.offset;
  }
  const char *sectionName(size_t index) const {
    const Elf64_Shdr *names = sectionNames;
    if (!names || index >= sections.size() ||
        sections[index].sh_name >= names->sh_size)
      return "?";
    return reinterpret_cast<const char *>(data + names->sh_offset +
                                          sections[index].sh_name);
  }
  std::string symbolName(size_t index) const {
    const Elf64_Sym &symbol = symbols[index];
    if (ELF64_ST_TYPE(symbol.st_info) == STT_SECTION)
      return sectionName(symbol.st_shndx);
    if (symbol.st_name >= symbolNames->sh_size)
      return "?";
    return reinterpret_cast<const char *>(data + symbolNames->sh_offset +
                                          symbol.st_name);
  }
  /// Whether a string table is inside the object and NUL-terminated.
  bool isStringTable(const Elf64_Shdr &s) const {
    return s.sh_type == SHT_STRTAB && s.sh_size > 0 &&
           data[s.sh_offset + s.sh_size - 1] == '\0';
  }

  bool readTables() {
    Elf64_Ehdr header;
    if (size < sizeof(header) || std::memcmp(data, ELFMAG, SELFMAG) != 0)
      return fail("not an ELF object");
    std::memcpy(&header, data, sizeof(header));
    // e_machine is at the same offset in 32- and 64-bit headers.
    if (header.e_ident[EI_DATA] == ELFDATA2LSB)
      for (const Architecture &candidate : Architectures)
        if (candidate.machine == header.e_machine)
          arch = &candidate;
    if (!arch)
      return fail("the object loader supports x86-64 objects only; this "
                  "object is for machine " +
                  std::to_string(header.e_ident[EI_DATA] == ELFDATA2LSB
                                     ? header.e_machine
                                     : __builtin_bswap16(header.e_machine)));
    if (header.e_ident[EI_CLASS] != ELFCLASS64)
      return fail("not a 64-bit ELF object");
    if (header.e_type != ET_REL)
      return fail("not a relocatable object (ELF type " +
                  std::to_string(header.e_type) + ")");
    if (header.e_shnum == 0) // also how 65280 sections or more are counted
      return fail("malformed or unsupported object: no section count");
    if (header.e_shentsize != sizeof(Elf64_Shdr))
      return fail("malformed object: unexpected section header size");
    if (header.e_shoff > size ||
        uint64_t(header.e_shnum) * sizeof(Elf64_Shdr) > size - header.e_shoff)
      return fail("malformed object: section headers past its end");
    sections.resize(header.e_shnum);
    std::memcpy(sections.data(), data + header.e_shoff,
                sections.size() * sizeof(Elf64_Shdr));
    for (const Elf64_Shdr &s : sections)
      if (s.sh_type != SHT_NOBITS &&
          (s.sh_offset > size || s.sh_size > size - s.sh_offset))
        return fail("malformed object: a section runs past its end");
    if (header.e_shstrndx < sections.size() &&
        isStringTable(sections[header.e_shstrndx]))
      sectionNames = &sections[header.e_shstrndx];

    for (size_t i = 0; i < sections.size(); ++i)
      if (sections[i].sh_type == SHT_SYMTAB)
        symbolTable = i;
    if (!symbolTable)
      return fail("malformed object: no symbol table");
    const Elf64_Shdr &table = sections[symbolTable];
    if (table.sh_entsize != sizeof(Elf64_Sym) || table.sh_link == 0 ||
        table.sh_link >= sections.size() ||
        !isStringTable(sections[table.sh_link]))
      return fail("malformed object: bad symbol table");
    symbolNames = &sections[table.sh_link];
    symbols.resize(table.sh_size / sizeof(Elf64_Sym));
    if (symbols.empty())
      return fail("malformed object: empty symbol table");
    std::memcpy(symbols.data(), data + table.sh_offset,
                symbols.size() * sizeof(Elf64_Sym));
    return true;
  }

  /// Gives `length` bytes aligned to `alignment` a place in `group`.
  bool place(Group group, uint64_t length, uint64_t alignment, Placement &p) {
    alignment = alignment ? alignment : 1;
    if ((alignment & (alignment - 1)) || alignment > pageSize)
      return fail("unsupported alignment " + std::to_string(alignment));
    if (length > MaxBlockSize)
      return fail("the object is too large to load (over 2 GiB)");
    p.group = group;
    p.offset = (groupSize[group] + alignment - 1) & ~(alignment - 1);
    groupSize[group] = p.offset + length;
    return true;
  }

  bool layOut() {
    pageSize = uint64_t(sysconf(_SC_PAGESIZE));
    placements.resize(sections.size());
    for (size_t i = 0; i < sections.size(); ++i) {
      const Elf64_Shdr &s = sections[i];
      if (!(s.sh_flags & SHF_ALLOC))
        continue;
      bool code = s.sh_flags & SHF_EXECINSTR, writable = s.sh_flags & SHF_WRITE;
      if (code && writable)
        return fail(std::string("writable code section ") + sectionName(i) +
                    " is not supported");
      if (s.sh_flags & SHF_TLS)
        return fail("thread-local storage is not supported");
      if ((s.sh_type == SHT_INIT_ARRAY || s.sh_type == SHT_FINI_ARRAY ||
           s.sh_type == SHT_PREINIT_ARRAY) && s.sh_size > 0)
        return fail("static constructors and destructors are not supported");
      Group group = code ? Code : writable ? Writable : ReadOnly;
      if (!place(group, s.sh_size, s.sh_addralign, placements[i]))
        return false;
    }
    // A GOT slot for each undefined symbol (its stub jumps through it) and
    // for each symbol a GOT relocation refers to.
    referenced.assign(symbols.size(), false);
    slotOf.assign(symbols.size(), -1);
    bool scanned = forEachRelocation([&](size_t, const Elf64_Rela &rela) {
      uint64_t index = ELF64_R_SYM(rela.r_info);
      referenced[index] = true;
      bool undefined = index != 0 && symbols[index].st_shndx == SHN_UNDEF;
      if ((undefined || arch->usesGotSlot(ELF64_R_TYPE(rela.r_info))) &&
          slotOf[index] < 0) {
        slotOf[index] = int64_t(slotSymbols.size());
        slotSymbols.push_back(index);
      }
      return true;
    });
    if (!scanned)
      return false;
    if (!place(ReadOnly, slotSymbols.size() * 8, 8, gotPlacement) ||
        !place(Code, slotSymbols.size() * arch->stubSize, 8, stubPlacement))
      return false;
    commons.resize(symbols.size());
    for (size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i].st_shndx == SHN_COMMON &&
          !place(Writable, symbols[i].st_size, symbols[i].st_value, commons[i]))
        return false;
    return true;
  }

  bool mapBlock() {
    for (int g = 0; g < NumGroups; ++g) {
      groupStart[g] = blockSize;
      blockSize += (groupSize[g] + pageSize - 1) & ~(pageSize - 1);
    }
    if (blockSize > MaxBlockSize)
      return fail("the object is too large to load (over 2 GiB)");
    blockSize = blockSize ? blockSize : pageSize;
    void *mapped = mmap(nullptr, blockSize, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      return fail(std::string("mmap failed: ") + std::strerror(errno));
    block = static_cast<uint8_t *>(mapped);
    for (size_t i = 0; i < sections.size(); ++i)
      if (isLoaded(i) && sections[i].sh_type != SHT_NOBITS)
        std::memcpy(reinterpret_cast<void *>(addressOf(placements[i])),
                    data + sections[i].sh_offset, sections[i].sh_size);
    return true;
  }

  bool resolveSymbols() {
    uint64_t got = addressOf(gotPlacement);
    symbolAddresses.assign(symbols.size(), 0);
    for (size_t i = 1; i < symbols.size(); ++i) {
      const Elf64_Sym &symbol = symbols[i];
      uint16_t section = symbol.st_shndx;
      if (section == SHN_UNDEF) {
        if (!referenced[i])
          continue;
        std::string name = symbolName(i);
        if (name == "_GLOBAL_OFFSET_TABLE_") {
          symbolAddresses[i] = got;
          continue;
        }
        // The runtime's own functions first: this library's symbols are not
        // global when Python loads it.
        const void *found = runtimeSymbol(name.c_str());
        bool helper = isCompilerRuntimeHelper(name.c_str());
        if (!found && !helper)
          found = dlsym(RTLD_DEFAULT, name.c_str());
        if (!found && helper)
          return fail("unresolved symbol '" + name +
                      "': a compiler-runtime helper the runtime does not "
                      "provide (FloatHelpers.h)");
        if (!found && ELF64_ST_BIND(symbol.st_info) != STB_WEAK)
          return fail("unresolved symbol '" + name +
                      "': not found in the process");
        symbolAddresses[i] = uint64_t(found); // a missing weak symbol is 0
      } else if (section == SHN_ABS) {
        symbolAddresses[i] = symbol.st_value;
      } else if (section == SHN_COMMON) {
        symbolAddresses[i] = addressOf(commons[i]);
      } else if (isLoaded(section)) {
        symbolAddresses[i] = addressOf(placements[section]) + symbol.st_value;
      } else if (referenced[i]) {
        return fail("symbol '" + symbolName(i) + "' is in section " +
                    std::to_string(section) + ", which is not loaded");
      }
    }
    uint64_t stubs = addressOf(stubPlacement);
    for (size_t k = 0; k < slotSymbols.size(); ++k) {
      uint64_t slot = got + 8 * k;
      std::memcpy(reinterpret_cast<void *>(slot),
                  &symbolAddresses[slotSymbols[k]], 8);
      uint64_t stub = stubs + arch->stubSize * k;
      arch->writeStub(reinterpret_cast<uint8_t *>(stub), stub, slot);
    }
    return true;
  }

  bool findEntries(const std::vector<std::string> &names,
                   std::vector<uint64_t> &entries) {
    entries.assign(names.size(), 0);
    for (size_t n = 0; n < names.size(); ++n) {
      size_t i = 1;
      for (; i < symbols.size(); ++i)
        if (ELF64_ST_BIND(symbols[i].st_info) != STB_LOCAL &&
            symbols[i].st_shndx != SHN_UNDEF && symbolName(i) == names[n])
          break;
      if (i == symbols.size())
        return fail("no symbol '" + names[n] + "' is defined in the object");
      entries[n] = symbolAddresses[i];
    }
    return true;
  }

  /// Calls `visit(target section, relocation)` for each relocation of a
  /// loaded section, once the relocation is checked to be well-formed.
  template <typename Visit> bool forEachRelocation(Visit visit) {
    for (const Elf64_Shdr &s : sections) {
      if ((s.sh_type != SHT_RELA && s.sh_type != SHT_REL) ||
          !isLoaded(s.sh_info))
        continue; // e.g. the relocations of debug info
      if (s.sh_type == SHT_REL)
        return fail("REL relocation sections are not supported");
      const Elf64_Shdr &target = sections[s.sh_info];
      if (s.sh_link != symbolTable || s.sh_entsize != sizeof(Elf64_Rela) ||
          target.sh_type == SHT_NOBITS)
        return fail("malformed object: bad relocation section");
      for (uint64_t at = 0; at + sizeof(Elf64_Rela) <= s.sh_size;
           at += sizeof(Elf64_Rela)) {
        Elf64_Rela rela;
        std::memcpy(&rela, data + s.sh_offset + at, sizeof(rela));
        if (ELF64_R_SYM(rela.r_info) >= symbols.size() ||
            rela.r_offset > target.sh_size)
          return fail("malformed object: bad relocation");
        if (!visit(s.sh_info, rela))
          return false;
      }
    }
    return true;
  }

  bool applyRelocations() {
    uint64_t got = addressOf(gotPlacement), stubs = addressOf(stubPlacement);
    return forEachRelocation([&](size_t section, const Elf64_Rela &rela) {
      uint64_t index = ELF64_R_SYM(rela.r_info);
      int64_t slot = slotOf[index];
      bool viaStub = slot >= 0 && symbols[index].st_shndx == SHN_UNDEF;
      Relocation r;
      r.type = ELF64_R_TYPE(rela.r_info);
      r.place = addressOf(placements[section]) + rela.r_offset;
      r.location = reinterpret_cast<uint8_t *>(r.place);
      r.room = sections[section].sh_size - rela.r_offset;
      r.symbol = symbolAddresses[index];
      r.addend = rela.r_addend;
      r.got = got;
      r.slot = slot >= 0 ? got + 8 * uint64_t(slot) : 0;
      r.callTarget = viaStub ? stubs + arch->stubSize * slot : r.symbol;
      std::string message;
      if (arch->apply(r, message))
        return true;
      return fail("relocation (type " + std::to_string(r.type) + ") at " +
                  sectionName(section) + "+" + hex(rela.r_offset) +
                  " against '" + symbolName(index) + "': " + message);
    });
  }

  bool protect() {
    const int protections[NumGroups] = {PROT_READ | PROT_EXEC, PROT_READ,
                                        PROT_READ | PROT_WRITE};
    for (int g = 0; g < NumGroups; ++g) {
      uint64_t length = (groupSize[g] + pageSize - 1) & ~(pageSize - 1);
      if (length && mprotect(block + groupStart[g], length, protections[g]))
        return fail(std::string("mprotect failed: ") + std::strerror(errno));
    }
    char *code = reinterpret_cast<char *>(block + groupStart[Code]);
    __builtin___clear_cache(code, code + groupSize[Code]);
    return true;
  }

  const uint8_t *data;
  size_t size;
  std::string &error;
  const Architecture *arch = nullptr;
  std::vector<Elf64_Shdr> sections;
  const Elf64_Shdr *sectionNames = nullptr, *symbolNames = nullptr;
  size_t symbolTable = 0;
  std::vector<Elf64_Sym> symbols;
  std::vector<bool> referenced;          // by a relocation that is applied
  std::vector<uint64_t> symbolAddresses; // per symbol, once resolved
  std::vector<int64_t> slotOf;           // per symbol: its GOT slot, or -1
  std::vector<uint64_t> slotSymbols;     // per GOT slot: its symbol
  std::vector<Placement> placements;     // per section
  std::vector<Placement> commons;        // per symbol, for COMMON ones
  Placement gotPlacement, stubPlacement;
  uint64_t pageSize = 4096;
  uint64_t groupSize[NumGroups] = {}, groupStart[NumGroups] = {};
  uint8_t *block = nullptr;
  uint64_t blockSize = 0;
  bool succeeded = false;
};

} // namespace

bool loadObject(const void *data, size_t size,
                const std::vector<std::string> &names,
                std::vector<uint64_t> &addresses, std::string &error,
                LoadedBlock *block) {
  // Each load works on its own state and mapping (mmap, mprotect and dlsym
  // are thread-safe), so concurrent loads need no lock.
  ObjectLoad load(data, size, error);
  if (!load.run(names, addresses))
    return false;
  if (block)
    *block = load.loadedBlock();
  return true;
}

void unloadObject(const LoadedBlock &block) {
  if (block.start)
    munmap(block.start, block.size);
}

} // namespace runtime
} // namespace adjit
