/*
 * NpeLoop — benchmark helper (bench/bench.py compiles it with javac into .build/bench).
 *
 *   java -cp .build/bench NpeLoop [N]
 *
 * Throws and catches N NullPointerExceptions (default 200,000) by calling a method on a null
 * reference read from a non-final static field, then prints "caught N" and exits 0. HotSpot compiles
 * the null check implicitly: the load faults, its SIGSEGV handler turns the fault into the exception
 * (until the method is recompiled with explicit checks after enough traps). Under a tracer every
 * such SIGSEGV is a signal-delivery-stop of a crash signal that the program handles: the JVM workload
 * of bench.py.
 */
public class NpeLoop {
    static String nothing;          // always null; not final, so the JIT cannot fold the check away
    static int sink;

    static int length(String s) {
        return s.length();
    }

    public static void main(String[] args) {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int caught = 0;
        for (int i = 0; i < count; i++) {
            try {
                sink += length(nothing);
            } catch (NullPointerException e) {
                caught++;
            }
        }
        System.out.println("caught " + caught);
        if (caught != count) System.exit(1);
    }
}
