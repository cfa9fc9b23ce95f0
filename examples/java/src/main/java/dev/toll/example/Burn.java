package dev.toll.example;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one request costs a reference service: the knobs of {@code toll app}
 * ({@code app.Burn} in Go), with the same meaning and the same syntax.
 */
final class Burn {
    /** Math.log iterations between two reads of the thread CPU clock. */
    private static final int SPIN_CHUNK = 256;
    /** The stride at which the allocation is touched, one write per page. */
    private static final int PAGE = 4096;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Math.log iterations, as in the SkyWalking Go benchmark's services. */
    final int work;
    /** CPU time burnt on top of work, on the calling thread's CPU clock. */
    final long extraCpuNanos;
    /** Wall time slept, using no CPU. */
    final long extraDelayNanos;
    /** Bytes allocated on the heap and touched. */
    final int extraAllocBytes;

    Burn(int work, long extraCpuNanos, long extraDelayNanos, int extraAllocBytes) {
        List<String> errs = new ArrayList<>();
        if (work < 0) {
            errs.add("work " + work + " is negative");
        }
        if (extraCpuNanos < 0) {
            errs.add("extra-cpu is negative");
        }
        if (extraDelayNanos < 0) {
            errs.add("extra-delay is negative");
        }
        if (extraAllocBytes < 0) {
            errs.add("extra-alloc is negative");
        }
        if (extraCpuNanos > 0 && !(THREADS.isCurrentThreadCpuTimeSupported() && THREADS.isThreadCpuTimeEnabled())) {
            errs.add("extra-cpu: this JVM cannot read the thread CPU clock");
        }
        if (!errs.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", errs));
        }
        this.work = work;
        this.extraCpuNanos = extraCpuNanos;
        this.extraDelayNanos = extraDelayNanos;
        this.extraAllocBytes = extraAllocBytes;
    }

    /**
     * Spends this burn: work iterations, then the extra CPU, allocation and
     * delay. The result is computed from all of it; callers put it in their
     * answer so that the JIT cannot drop any of it.
     */
    double run() {
        double r = logLoop(work);
        if (extraCpuNanos > 0) {
            r += spinCpu(extraCpuNanos);
        }
        if (extraAllocBytes > 0) {
            r += allocTouch(extraAllocBytes);
        }
        if (extraDelayNanos > 0) {
            long end = System.nanoTime() + extraDelayNanos;
            for (long left = extraDelayNanos; left > 0; left = end - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
        }
        return r;
    }

    /** Returns the sum of ln(i) for i in 1..n. */
    static double logLoop(int n) {
        double s = 0;
        for (int i = 1; i <= n; i++) {
            s += Math.log(i);
        }
        return s;
    }

    private static double spinCpu(long nanos) {
        long start = THREADS.getCurrentThreadCpuTime();
        double r = 0;
        do {
            r += logLoop(SPIN_CHUNK);
        } while (THREADS.getCurrentThreadCpuTime() - start < nanos);
        return r;
    }

    private static int allocTouch(int n) {
        byte[] buf = new byte[n];
        for (int i = 0; i < n; i += PAGE) {
            buf[i] = (byte) ((i / PAGE) | 1);
        }
        buf[n - 1] |= 1;
        int sum = 0;
        for (int i = 0; i < n; i += PAGE) {
            sum ^= buf[i];
        }
        return sum ^ buf[n - 1];
    }

    private static final Pattern DURATION_PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)");

    /**
     * Parses a duration as Go's time.ParseDuration does, as toll app's flags
     * take it: "0", "500us", "1.5ms", "2s", "1m30s".
     */
    static long parseDuration(String name, String s) {
        String t = s.trim();
        if (t.equals("0")) {
            return 0;
        }
        Matcher m = DURATION_PART.matcher(t);
        double nanos = 0;
        int at = 0;
        while (at < t.length() && m.find(at) && m.start() == at) {
            double unit = switch (m.group(2)) {
                case "ns" -> 1;
                case "us", "µs", "μs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
            };
            nanos += Double.parseDouble(m.group(1)) * unit;
            at = m.end();
        }
        if (at == 0 || at != t.length()) {
            throw new IllegalArgumentException(name + ": \"" + s + "\" is not a duration (want e.g. 500us, 2ms or 0)");
        }
        return Math.round(nanos);
    }

    private static final String[][] BYTE_UNITS = {
        {"KiB", "1024"}, {"MiB", "1048576"}, {"GiB", "1073741824"},
        {"KB", "1000"}, {"MB", "1000000"}, {"GB", "1000000000"}, {"B", "1"},
    };

    /**
     * Parses a size as toll app's flags take it: a whole number of bytes with
     * an optional suffix B, KiB, MiB, GiB, KB, MB or GB ("65536", "64KiB").
     */
    static int parseSize(String name, String s) {
        String num = s.trim();
        long mult = 1;
        for (String[] u : BYTE_UNITS) {
            if (num.endsWith(u[0])) {
                num = num.substring(0, num.length() - u[0].length()).trim();
                mult = Long.parseLong(u[1]);
                break;
            }
        }
        try {
            long n = Long.parseLong(num) * mult;
            if (n < 0 || n > Integer.MAX_VALUE - 8) {
                throw new NumberFormatException();
            }
            return (int) n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": \"" + s + "\" is not a size (want e.g. 65536, 64KiB or 1MiB)");
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "work=%d extra-cpu=%s extra-delay=%s extra-alloc=%dB",
                work, Duration.ofNanos(extraCpuNanos), Duration.ofNanos(extraDelayNanos), extraAllocBytes);
    }
}
