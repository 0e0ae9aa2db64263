// The workload of scripts/dotnet-e2e.sh: three CPU-bound phases, each in a
// kind of code perf has to name differently.
//
//   jit  methods of this program (E2eHot*), JIT-compiled, recompiled by
//        tiered compilation (Tier0, OSR, Tier1: each a new piece of code)
//   fw   framework code: Regex (interpreted), BigInteger, LINQ, which runs
//        as ReadyToRun code from the framework's PE images (until tiered
//        compilation rejits the hottest methods)
//   late methods first called only now (E2eLate*), and a DynamicMethod
//        (E2eDynamicLate) emitted now: code that did not exist before
//
// Usage: e2e JIT_SECONDS FW_SECONDS LATE_SECONDS [TRIGGER_FILE]
// With TRIGGER_FILE the jit phase goes on until that file exists (at most
// 60 s): a profiler attached to the running process decides when new code
// appears. Each phase start is printed, flushed, as "phase NAME UNIXTIME".
using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Numerics;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.RegularExpressions;

namespace DotnetE2e;

static class E2eHot
{
    // Integer mixing: a loop the JIT compiles into a tight body.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong E2eHotXorshiftSpin(ulong x, int n)
    {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        return x;
    }

    // Floating point over an array.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double E2eHotPolynomialSpin(double[] a, int rounds)
    {
        double s = 0;
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < a.Length; i++)
                s = s * 0.999 + a[i] * (a[i] - 0.5);
        return s;
    }

    // A small sieve, for branchy code.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int E2eHotSieveSpin(bool[] composite)
    {
        Array.Clear(composite);
        int n = 0;
        for (int i = 2; i < composite.Length; i++) {
            if (composite[i])
                continue;
            n++;
            for (int j = i * 2; j < composite.Length; j += i)
                composite[j] = true;
        }
        return n;
    }
}

static class E2eLate
{
    // Never called before the late phase: JIT-compiled only then.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong E2eLateBornSpin(ulong x, int n)
    {
        for (int i = 0; i < n; i++)
            x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
        return x;
    }

    // long E2eDynamicLate(long x, int n) { for (; n > 0; n--) x = x * 31 + n; return x; }
    public static Func<long, int, long> EmitDynamic()
    {
        var dm = new DynamicMethod("E2eDynamicLate", typeof(long), new[] { typeof(long), typeof(int) },
            typeof(E2eLate).Module);
        var il = dm.GetILGenerator();
        var top = il.DefineLabel();
        var test = il.DefineLabel();
        il.Emit(OpCodes.Br, test);
        il.MarkLabel(top);
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldc_I8, 31L);
        il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Conv_I8);
        il.Emit(OpCodes.Add);
        il.Emit(OpCodes.Starg_S, (byte)0);
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Ldc_I4_1);
        il.Emit(OpCodes.Sub);
        il.Emit(OpCodes.Starg_S, (byte)1);
        il.MarkLabel(test);
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Ldc_I4_0);
        il.Emit(OpCodes.Bgt, top);
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ret);
        return dm.CreateDelegate<Func<long, int, long>>();
    }
}

static class Program
{
    static volatile bool sink;

    static void Phase(string name)
    {
        long ms = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        Console.WriteLine($"phase {name} {ms / 1000}.{ms % 1000:D3}");
        Console.Out.Flush();
    }

    static void RunJit(Func<bool> more)
    {
        ulong x = 88172645463325252UL;
        var a = new double[512];
        for (int i = 0; i < a.Length; i++)
            a[i] = i / 512.0;
        var composite = new bool[20000];
        double d = 0;
        int primes = 0;
        while (more()) {
            x = E2eHot.E2eHotXorshiftSpin(x, 200000);
            d += E2eHot.E2eHotPolynomialSpin(a, 200);
            primes += E2eHot.E2eHotSieveSpin(composite);
        }
        sink = (x ^ (ulong)d ^ (ulong)primes) == 42;
    }

    static void RunFramework(Func<bool> more)
    {
        var text = new StringBuilder();
        var rnd = new Random(1);
        for (int i = 0; i < 2000; i++)
            text.Append("user").Append(rnd.Next(100000)).Append("@host").Append(rnd.Next(50))
                .Append(".example ").Append(rnd.Next()).Append(' ');
        string s = text.ToString();
        // Interpreted (not RegexOptions.Compiled): the matching runs in the
        // framework's own code, not in code emitted for this pattern.
        var re = new Regex(@"\b(\w+)(\d{2,})@host(\d+)\.example\s+(\d+)", RegexOptions.None);
        var data = Enumerable.Range(0, 20000).Select(i => (i * 7919) % 10007).ToArray();
        BigInteger big = BigInteger.Pow(3, 4000);
        long n = 0;
        while (more()) {
            n += re.Matches(s).Count;
            var p = BigInteger.Multiply(big, big + n);
            n += p.ToString().Length;
            n += data.Where(v => (v & 3) != 0).OrderBy(v => v).Skip(10).Take(100).Sum();
        }
        sink = n == 42;
    }

    static void RunLate(Func<bool> more)
    {
        var dyn = E2eLate.EmitDynamic();
        ulong x = 1;
        long y = 1;
        // Short calls, many of them: E2eLateBornSpin runs as Tier0 code until
        // call counting (after its 100 ms delay) has it recompiled, instead
        // of leaving its loop through OSR at once. A profiler attached before
        // sees its Tier0 code first, its later tiers only then.
        while (more()) {
            for (int i = 0; i < 100; i++)
                x = E2eLate.E2eLateBornSpin(x, 2000);
            y = dyn(y, 200000);
        }
        sink = (x ^ (ulong)y) == 42;
    }

    static Func<bool> For(double seconds)
    {
        var sw = Stopwatch.StartNew();
        return () => sw.Elapsed.TotalSeconds < seconds;
    }

    static int Main(string[] args)
    {
        if (args.Length < 3) {
            Console.Error.WriteLine("usage: e2e JIT_SECONDS FW_SECONDS LATE_SECONDS [TRIGGER_FILE]");
            return 2;
        }
        double jit = double.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture);
        double fw = double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
        double late = double.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture);
        Console.WriteLine($"pid {Environment.ProcessId}");
        Phase("jit");
        if (args.Length > 3) {
            string trigger = args[3];
            var sw = Stopwatch.StartNew();
            RunJit(() => !File.Exists(trigger) && sw.Elapsed.TotalSeconds < 60);
        } else {
            RunJit(For(jit));
        }
        Phase("fw");
        RunFramework(For(fw));
        Phase("late");
        RunLate(For(late));
        Phase("end");
        return 0;
    }
}
