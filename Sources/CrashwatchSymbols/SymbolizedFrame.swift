// SymbolizedFrame.swift — how a libdw lookup becomes frame records: the symbol and its demangled form,
// the offset into it, source file:line:column, and one record per inlined call. Shared by capture and
// offline re-symbolication, so both write frames the same way.
import CrashwatchModel
import CrashwatchSystem

/// Turns symbol lookups into frame records.
public enum SymbolizedFrame {
    /// The records for one physical frame: `base` (address, image, how) filled in from `found`, expanded
    /// into one record per inline level, innermost first; every record but the last is `inlined`.
    /// `exact` says the pc is the faulting instruction rather than a return address.
    public static func records(for base: FrameRecord, found: SymbolLookup, exact: Bool, names: NameCache? = nil) -> [FrameRecord] {
        func functionName(_ symbol: String) -> String { names?.functionName(symbol) ?? Self.functionName(symbol) }
        var concrete = base
        if let symbol = found.symbol {
            concrete.symbol = symbol
            concrete.function = functionName(symbol)
            // The lookup was at pc - 1 for a return address; the offset is the pc's.
            concrete.symbolOffset = Address(found.offset &+ (exact ? 0 : 1))
            concrete.symbolSource = found.source?.rawValue
        }
        guard !found.levels.isEmpty else { return [concrete] }

        var records: [FrameRecord] = []
        for (position, level) in found.levels.enumerated() {
            var record = position == found.levels.count - 1 ? concrete : base
            record.index = base.index + position
            record.file = level.file
            record.line = level.line
            record.column = level.column
            record.inlined = level.inlined
            // The innermost record is the physical frame; the ones outside it come from inline info.
            record.how = position == 0 ? base.how : .inline
            if level.inlined {
                record.symbol = level.name
                record.function = level.name.map(functionName)
                record.symbolOffset = nil
                record.symbolSource = SymbolSource.debuginfo.rawValue
            } else if concrete.symbol == nil, let name = level.name {
                record.symbol = name
                record.function = functionName(name)
                record.symbolSource = SymbolSource.debuginfo.rawValue
            } else if let name = level.name, let symbol = concrete.symbol {
                record.function = concreteFunctionName(dwarfName: name, symbol: symbol, functionName: functionName)
            }
            records.append(record)
        }
        return records
    }

    /// The human name of a raw symbol: demangled Rust/C++/Swift, or the name without an ELF symbol version
    /// (`__libc_start_main@@GLIBC_2.34` → `__libc_start_main`).
    public static func functionName(_ symbol: String) -> String {
        naming(symbol).name
    }

    /// `functionName(symbol)`, and why the name was left mangled when its demangling was given up (a Swift name
    /// past its CPU-time budget: `Demangling.gaveUp`).
    static func naming(_ symbol: String) -> (name: String, gaveUp: String?) {
        let plain = unversioned(symbol)
        switch demangling(plain) {
        case .name(let demangled): return (demangled, nil)
        case .notMangled: return (plain, nil)
        case .gaveUp(let why): return (plain, why)
        }
    }

    /// The name of a function both the symbol table and DWARF name. DWARF's where it gives a linkage name,
    /// or where the symbol is not mangled and may be an alias (`__libc_start_main_impl`, not
    /// `__libc_start_main@@GLIBC_2.34`); the demangled symbol where DWARF has a plain name that the
    /// symbol's demangled form contains, which says more (`app::use(app::Holder<int> const&)`, not `app::use`).
    public static func concreteFunctionName(dwarfName: String, symbol: String,
                                            functionName: (String) -> String = functionName) -> String {
        let fromDWARF = functionName(dwarfName)
        guard fromDWARF == unversioned(dwarfName) else { return fromDWARF }
        let fromSymbol = functionName(symbol)
        guard fromSymbol != unversioned(symbol) else { return fromDWARF }
        return fromSymbol.contains(dwarfName) ? fromSymbol : fromDWARF
    }

    /// `symbol` without an ELF symbol version (`@GLIBC_2.2.5`, `@@GLIBC_2.34`).
    static func unversioned(_ symbol: String) -> String {
        symbol.split(separator: "@", maxSplits: 1).first.map(String.init) ?? symbol
    }
}

/// Function names already demangled: a deep recursion repeats one symbol on every frame, and one
/// hostile name can take long to demangle, so each is demangled once. Names left mangled because their
/// demangling was given up are said in `softErrors`.
public final class NameCache {
    private var names: [String: String] = [:]
    /// One per symbol given up, the first few.
    public private(set) var softErrors: [SoftError] = []

    public init() {}

    public func functionName(_ symbol: String) -> String {
        if let known = names[symbol] { return known }
        let (name, gaveUp) = SymbolizedFrame.naming(symbol)
        if let gaveUp, softErrors.count < 8 {
            softErrors.append(SoftError(stage: "symbols", message: "\(capped(String(name.prefix(200)))) left mangled: \(gaveUp)"))
        }
        if names.count < 65536 { names[symbol] = name }
        return name
    }
}
