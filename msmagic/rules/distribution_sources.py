"""Sources of the distribution classes the port writes into a cell (rule DST006/DST007).

Each is PyTorch's ``torch.distributions`` class written with MindSpore ops only (no
PyTorch, no msmagic): ``BASE`` becomes the name of the base class written once per cell,
``MS`` the name ``mindspore`` is imported as. The formulas are PyTorch's (torch 2.x
``torch/distributions/*.py``), evaluated with ``mindspore.ops``."""

BASE_SOURCE = '''
class NAME:
    """PyTorch's torch.distributions.Distribution interface, computed with MindSpore ops."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)

    @staticmethod
    def _tensors(*values):
        """PyTorch's broadcast_all: numbers become tensors of the tensors' float dtype."""
        dtype = next((v.dtype for v in values if isinstance(v, MS.Tensor)), MS.float32)
        ts = [v if isinstance(v, MS.Tensor) else MS.Tensor(v, dtype) for v in values]
        shape = NAME._shape(*[t.shape for t in ts])
        return [MS.ops.broadcast_to(t, shape) if tuple(t.shape) != shape else t for t in ts]

    @staticmethod
    def _shape(*shapes):
        out = []
        for shape in shapes:
            shape = tuple(shape)
            if len(shape) > len(out):
                out = [1] * (len(shape) - len(out)) + out
            for i, n in enumerate(shape):
                j = len(out) - len(shape) + i
                out[j] = n if out[j] == 1 else out[j]
        return tuple(out)

    @staticmethod
    def _value(value, like):
        return value if isinstance(value, MS.Tensor) else MS.Tensor(value, like.dtype)

    @staticmethod
    def _wrap(d):
        """A distribution of MindSpore's nn.probability.distribution (how the port writes
        Normal, Uniform, Exponential, Bernoulli, Categorical) seen through PyTorch's names."""
        return NAME._Adapter(d) if hasattr(d, "kl_loss") else d

    class _Adapter:
        has_rsample = True

        def __init__(self, d):
            self.d = d
            probs = getattr(d, "probs", None)
            if type(d).__name__ == "Categorical":
                self.batch_shape = tuple(probs.shape[:-1])
            else:
                self.batch_shape = tuple(d.mean().shape)
            self.event_shape = ()

        mean = property(lambda self: self.d.mean())
        variance = property(lambda self: self.d.var())
        stddev = property(lambda self: self.d.sd())
        mode = property(lambda self: self.d.mode())

        def log_prob(self, value):
            return self.d.log_prob(value)

        def cdf(self, value):
            return self.d.cdf(value)

        def entropy(self):
            return self.d.entropy()

        def sample(self, sample_shape=()):
            return self.d.sample(tuple(sample_shape))

        rsample = sample

        def kl_divergence(self, q):
            name = type(self.d).__name__
            params = {"Normal": lambda d: (d.mean(), d.sd()), "Uniform": lambda d: (d.low, d.high),
                      "Exponential": lambda d: (d.rate,), "Bernoulli": lambda d: (d.probs,),
                      "Categorical": lambda d: (d.probs,)}[name](q.d)
            return self.d.kl_loss(name, *params)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def stddev(self):
        return MS.ops.sqrt(self.variance)

    def _extended_shape(self, sample_shape=()):
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()):
        return MS.ops.stop_gradient(self.rsample(sample_shape))

    def sample_n(self, n):
        return self.sample((n,))

    def perplexity(self):
        return MS.ops.exp(self.entropy())

    def _uniform(self, sample_shape, like, low=0.0):
        """Uniform draws in (low, 1) of the sample's shape (MindSpore's generator)."""
        shape = self._extended_shape(sample_shape)
        u = MS.ops.uniform(shape, MS.Tensor(0.0, MS.float32), MS.Tensor(1.0, MS.float32)).astype(like.dtype)
        tiny = float(MS.ops.finfo(like.dtype).tiny) if hasattr(MS.ops, "finfo") else 1.2e-38
        return MS.ops.clamp(u, min=max(low, tiny), max=1.0 - 1e-7 if like.dtype == MS.float32 else 1.0 - 1e-15)

    def _normal(self, sample_shape, like):
        return MS.ops.standard_normal(self._extended_shape(sample_shape)).astype(like.dtype)

    def _gamma(self, shape, concentration):
        """Gamma(concentration, 1) draws of ``shape`` (sample shape + the parameter's shape)."""
        alpha = MS.ops.broadcast_to(concentration, tuple(shape))
        out = MS.ops.random_gamma(MS.Tensor((), MS.int64), alpha.astype(MS.float32))
        return out.astype(concentration.dtype).reshape(tuple(shape))
'''

NORMAL_ICDF = "MS.ops.erfinv(2 * {p} - 1) * 2 ** 0.5"

SOURCES = {}

SOURCES["Laplace"] = '''
class NAME(BASE):
    """PyTorch's Laplace(loc, scale), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = self._tensors(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale ** 2

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=()):
        u = self._uniform(sample_shape, self.loc) * 2 - 1
        u = MS.ops.clamp(u, min=-1 + 1e-7 if self.loc.dtype == MS.float32 else -1 + 1e-15)
        return self.loc - self.scale * MS.ops.sign(u) * MS.ops.log1p(-MS.ops.abs(u))

    def log_prob(self, value):
        value = self._value(value, self.loc)
        return -MS.ops.log(2 * self.scale) - MS.ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        value = self._value(value, self.loc)
        return 0.5 - 0.5 * MS.ops.sign(value - self.loc) * MS.ops.expm1(-MS.ops.abs(value - self.loc) / self.scale)

    def icdf(self, value):
        term = self._value(value, self.loc) - 0.5
        return self.loc - self.scale * MS.ops.sign(term) * MS.ops.log1p(-2 * MS.ops.abs(term))

    def entropy(self):
        return 1 + MS.ops.log(2 * self.scale)

    def kl_divergence(self, q):
        ratio = self.scale / q.scale
        diff = MS.ops.abs(self.loc - q.loc)
        return -MS.ops.log(ratio) + diff / q.scale + ratio * MS.ops.exp(-diff / self.scale) - 1
'''

SOURCES["Cauchy"] = '''
class NAME(BASE):
    """PyTorch's Cauchy(loc, scale), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = self._tensors(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return MS.ops.full_like(self.loc, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return MS.ops.full_like(self.loc, float("inf"))

    def rsample(self, sample_shape=()):
        return self.icdf(self._uniform(sample_shape, self.loc))

    def log_prob(self, value):
        value = self._value(value, self.loc)
        return (-MS.ops.log(MS.Tensor(3.141592653589793, self.loc.dtype)) - MS.ops.log(self.scale)
                - MS.ops.log1p(((value - self.loc) / self.scale) ** 2))

    def cdf(self, value):
        value = self._value(value, self.loc)
        return MS.ops.atan((value - self.loc) / self.scale) / 3.141592653589793 + 0.5

    def icdf(self, value):
        value = self._value(value, self.loc)
        return MS.ops.tan(3.141592653589793 * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return 2.5310242469692907 + MS.ops.log(self.scale)

    def kl_divergence(self, q):
        t1 = MS.ops.log((self.scale + q.scale) ** 2 + (self.loc - q.loc) ** 2)
        return t1 - MS.ops.log(4 * self.scale * q.scale)
'''

SOURCES["Gumbel"] = '''
class NAME(BASE):
    """PyTorch's Gumbel(loc, scale), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = self._tensors(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc + self.scale * 0.5772156649015329

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return 1.2825498301618641 * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def rsample(self, sample_shape=()):
        return self.icdf(self._uniform(sample_shape, self.loc))

    def log_prob(self, value):
        y = (self.loc - self._value(value, self.loc)) / self.scale
        return (y - MS.ops.exp(y)) - MS.ops.log(self.scale)

    def cdf(self, value):
        return MS.ops.exp(-MS.ops.exp(-(self._value(value, self.loc) - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * MS.ops.log(-MS.ops.log(self._value(value, self.loc)))

    def entropy(self):
        return MS.ops.log(self.scale) + 1.5772156649015329

    def kl_divergence(self, q):
        ct1 = self.scale / q.scale
        ct2 = q.loc / q.scale
        ct3 = self.loc / q.scale
        t1 = -MS.ops.log(ct1) - ct2 + ct3
        t2 = ct1 * 0.5772156649015329
        t3 = MS.ops.exp(ct2 + MS.ops.lgamma(1 + ct1) - ct3)
        return t1 + t2 + t3 - 1.5772156649015329
'''

SOURCES["LogNormal"] = '''
class NAME(BASE):
    """PyTorch's LogNormal(loc, scale), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = self._tensors(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return MS.ops.exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self):
        return MS.ops.exp(self.loc - self.scale ** 2)

    @property
    def variance(self):
        s2 = self.scale ** 2
        return MS.ops.expm1(s2) * MS.ops.exp(2 * self.loc + s2)

    def rsample(self, sample_shape=()):
        return MS.ops.exp(self.loc + self.scale * self._normal(sample_shape, self.loc))

    def log_prob(self, value):
        y = MS.ops.log(self._value(value, self.loc))
        return (-((y - self.loc) ** 2) / (2 * self.scale ** 2) - MS.ops.log(self.scale)
                - 0.9189385332046727 - y)

    def cdf(self, value):
        y = MS.ops.log(self._value(value, self.loc))
        return 0.5 * (1 + MS.ops.erf((y - self.loc) / (self.scale * 2 ** 0.5)))

    def icdf(self, value):
        p = self._value(value, self.loc)
        return MS.ops.exp(self.loc + self.scale * MS.ops.erfinv(2 * p - 1) * 2 ** 0.5)

    def entropy(self):
        return 1.4189385332046727 + MS.ops.log(self.scale) + self.loc

    def kl_divergence(self, q):
        var_ratio = (self.scale / q.scale) ** 2
        t1 = ((self.loc - q.loc) / q.scale) ** 2
        return 0.5 * (var_ratio + t1 - 1 - MS.ops.log(var_ratio))
'''

SOURCES["Gamma"] = '''
class NAME(BASE):
    """PyTorch's Gamma(concentration, rate), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = self._tensors(concentration, rate)
        super().__init__(self.concentration.shape)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return MS.ops.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self._gamma(shape, self.concentration) / self.rate

    def log_prob(self, value):
        value = self._value(value, self.rate)
        return (MS.ops.xlogy(self.concentration, self.rate) + MS.ops.xlogy(self.concentration - 1, value)
                - self.rate * value - MS.ops.lgamma(self.concentration))

    def cdf(self, value):
        value = self._value(value, self.rate)
        return MS.ops.igamma(self.concentration, value * self.rate)

    def entropy(self):
        c = self.concentration
        return c - MS.ops.log(self.rate) + MS.ops.lgamma(c) + (1.0 - c) * MS.ops.digamma(c)

    def kl_divergence(self, q):
        t1 = q.concentration * MS.ops.log(self.rate / q.rate)
        t2 = MS.ops.lgamma(q.concentration) - MS.ops.lgamma(self.concentration)
        t3 = (self.concentration - q.concentration) * MS.ops.digamma(self.concentration)
        t4 = (q.rate - self.rate) * (self.concentration / self.rate)
        return t1 + t2 + t3 + t4
'''

SOURCES["Chi2"] = '''
class NAME(GAMMA):
    """PyTorch's Chi2(df): Gamma(df / 2, 1 / 2), computed with MindSpore ops."""

    def __init__(self, df, validate_args=None):
        (df,) = self._tensors(df)
        super().__init__(0.5 * df, 0.5)

    @property
    def df(self):
        return self.concentration * 2
'''

SOURCES["Beta"] = '''
class NAME(BASE):
    """PyTorch's Beta(concentration1, concentration0), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = self._tensors(concentration1, concentration0)
        super().__init__(self.concentration1.shape)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = self._gamma(shape, self.concentration1)
        y = self._gamma(shape, self.concentration0)
        return x / (x + y)

    def log_prob(self, value):
        x = self._value(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return (MS.ops.log(x) * (a - 1) + MS.ops.log(1 - x) * (b - 1)
                + MS.ops.lgamma(a + b) - MS.ops.lgamma(a) - MS.ops.lgamma(b))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        a0 = a + b
        return (MS.ops.lgamma(a) + MS.ops.lgamma(b) - MS.ops.lgamma(a0) - (2 - a0) * MS.ops.digamma(a0)
                - (a - 1) * MS.ops.digamma(a) - (b - 1) * MS.ops.digamma(b))

    def kl_divergence(self, q):
        sp = self.concentration1 + self.concentration0
        sq = q.concentration1 + q.concentration0
        t1 = MS.ops.lgamma(q.concentration1) + MS.ops.lgamma(q.concentration0) + MS.ops.lgamma(sp)
        t2 = MS.ops.lgamma(self.concentration1) + MS.ops.lgamma(self.concentration0) + MS.ops.lgamma(sq)
        t3 = (self.concentration1 - q.concentration1) * MS.ops.digamma(self.concentration1)
        t4 = (self.concentration0 - q.concentration0) * MS.ops.digamma(self.concentration0)
        t5 = (sq - sp) * MS.ops.digamma(sp)
        return t1 - t2 + t3 + t4 + t5
'''

SOURCES["StudentT"] = '''
class NAME(BASE):
    """PyTorch's StudentT(df, loc, scale), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = self._tensors(df, loc, scale)
        super().__init__(self.df.shape)

    @property
    def mean(self):
        return MS.ops.where(self.df > 1, self.loc, MS.ops.full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.scale ** 2 * self.df / (self.df - 2)
        m = MS.ops.where(self.df <= 2, MS.ops.full_like(m, float("inf")), m)
        return MS.ops.where(self.df <= 1, MS.ops.full_like(m, float("nan")), m)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        chi2 = 2 * self._gamma(shape, 0.5 * self.df)
        y = self._normal(sample_shape, self.df) * MS.ops.rsqrt(chi2 / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        y = (self._value(value, self.df) - self.loc) / self.scale
        z = (MS.ops.log(self.scale) + 0.5 * MS.ops.log(self.df) + 0.5723649429247001
             + MS.ops.lgamma(0.5 * self.df) - MS.ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * MS.ops.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = MS.ops.lgamma(0.5 * self.df) + 0.5723649429247001 - MS.ops.lgamma(0.5 * (self.df + 1))
        return (MS.ops.log(self.scale) + 0.5 * (self.df + 1)
                * (MS.ops.digamma(0.5 * (self.df + 1)) - MS.ops.digamma(0.5 * self.df))
                + 0.5 * MS.ops.log(self.df) + lbeta)
'''

SOURCES["Poisson"] = '''
class NAME(BASE):
    """PyTorch's Poisson(rate), computed with MindSpore ops."""

    def __init__(self, rate, validate_args=None):
        (self.rate,) = self._tensors(rate)
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return MS.ops.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = MS.ops.broadcast_to(self.rate, shape).astype(MS.float32)
        out = MS.ops.random_poisson(MS.Tensor((), MS.int64), rate)
        return out.astype(self.rate.dtype).reshape(shape)

    def log_prob(self, value):
        value = self._value(value, self.rate)
        return MS.ops.xlogy(value, self.rate) - self.rate - MS.ops.lgamma(value + 1)

    def kl_divergence(self, q):
        return self.rate * (MS.ops.log(self.rate) - MS.ops.log(q.rate)) - (self.rate - q.rate)
'''

_LOGITS = '''
    @staticmethod
    def _from(probs, logits, binary):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (probs,) = NAME._tensors(probs)
            if not binary:
                probs = probs / probs.sum(-1, keepdims=True)
            eps = 1.1920928955078125e-07 if probs.dtype == MS.float32 else 2.220446049250313e-16
            p = MS.ops.clamp(probs, min=eps, max=1 - eps)
            logits = MS.ops.log(p) - MS.ops.log1p(-p) if binary else MS.ops.log(p)
            return probs, logits
        (logits,) = NAME._tensors(logits)
        return (MS.ops.sigmoid(logits) if binary else MS.ops.softmax(logits, axis=-1)), logits
'''

SOURCES["Geometric"] = '''
class NAME(BASE):
    """PyTorch's Geometric(probs=None, logits=None), computed with MindSpore ops."""
''' + _LOGITS + '''
    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = self._from(probs, logits, True)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return MS.ops.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        u = self._uniform(sample_shape, self.probs)
        return MS.ops.floor(MS.ops.log(u) / MS.ops.log1p(-self.probs))

    def log_prob(self, value):
        value, probs = self._tensors(value, self.probs)
        probs = MS.ops.where((probs == 1) & (value == 0), MS.ops.zeros_like(probs), probs)
        return value * MS.ops.log1p(-probs) + MS.ops.log(self.probs)

    def entropy(self):
        x = self.logits
        bce = MS.ops.clamp(x, min=0) - x * self.probs + MS.ops.log1p(MS.ops.exp(-MS.ops.abs(x)))
        return bce / self.probs

    def kl_divergence(self, q):
        return -self.entropy() - MS.ops.log1p(-q.probs) / self.probs - q.logits
'''

SOURCES["Binomial"] = '''
class NAME(BASE):
    """PyTorch's Binomial(total_count=1, probs=None, logits=None), computed with MindSpore ops."""
''' + _LOGITS + '''
    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        probs, logits = self._from(probs, logits, True)
        self.total_count, self.probs, self.logits = self._tensors(
            total_count if isinstance(total_count, MS.Tensor) else float(total_count), probs, logits)
        self.total_count = self.total_count.astype(self.probs.dtype)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return MS.ops.minimum(MS.ops.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        n = int(self.total_count.max())
        shape = self._extended_shape(sample_shape)
        u = MS.ops.uniform(shape + (n,), MS.Tensor(0.0, MS.float32), MS.Tensor(1.0, MS.float32))
        k = MS.ops.arange(n).astype(self.probs.dtype)
        hits = (u.astype(self.probs.dtype) < self.probs.expand_dims(-1)) & (k < self.total_count.expand_dims(-1))
        return hits.astype(self.probs.dtype).sum(-1)

    def log_prob(self, value):
        value = self._value(value, self.probs)
        n, x = self.total_count, self.logits
        clamp = (MS.ops.clamp(x, min=0) + x - MS.ops.clamp(x, max=0)) / 2
        normalize = n * clamp + n * MS.ops.log1p(MS.ops.exp(-MS.ops.abs(x))) - MS.ops.lgamma(n + 1)
        return value * x - MS.ops.lgamma(value + 1) - MS.ops.lgamma(n - value + 1) - normalize

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = MS.ops.arange(1 + n).astype(self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return MS.ops.broadcast_to(values, (-1,) + self.batch_shape) if expand else values

    def entropy(self):
        values = self.enumerate_support(False)
        lp = self.log_prob(values)
        return -(MS.ops.exp(lp) * lp).sum(0)
'''

SOURCES["Multinomial"] = '''
class NAME(BASE):
    """PyTorch's Multinomial(total_count=1, probs=None, logits=None), computed with MindSpore ops."""
''' + _LOGITS + '''
    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        probs, logits = self._from(probs, logits, False)
        self.probs = probs / probs.sum(-1, keepdims=True)
        self.logits = logits - MS.ops.logsumexp(logits, -1, True)
        super().__init__(self.probs.shape[:-1], self.probs.shape[-1:])

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        k = self.probs.shape[-1]
        p2 = self.probs.reshape((-1, k)).astype(MS.float32)
        draws = MS.ops.multinomial(p2, self.total_count * max(1, int(MS.ops.ones(tuple(sample_shape)).size)), True)
        n = int(MS.ops.ones(tuple(sample_shape)).size)
        draws = draws.reshape((p2.shape[0], n, self.total_count))
        counts = MS.ops.one_hot(draws.astype(MS.int32), k, MS.Tensor(1.0, MS.float32), MS.Tensor(0.0, MS.float32)).sum(2)
        counts = counts.transpose(1, 0, 2).reshape(self._extended_shape(sample_shape))
        return counts.astype(self.probs.dtype)

    def log_prob(self, value):
        value = self._value(value, self.probs)
        logits = self.logits
        logits = MS.ops.where((value == 0) & MS.ops.isinf(logits) & (logits < 0), MS.ops.zeros_like(logits), logits)
        log_factorial_n = MS.ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = MS.ops.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
'''

SOURCES["Dirichlet"] = '''
class NAME(BASE):
    """PyTorch's Dirichlet(concentration), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        (self.concentration,) = self._tensors(concentration)
        super().__init__(self.concentration.shape[:-1], self.concentration.shape[-1:])

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdims=True)

    @property
    def mode(self):
        c = MS.ops.clamp(self.concentration - 1, min=0.0)
        mode = c / c.sum(-1, keepdims=True)
        mask = (self.concentration < 1).all(-1)
        k = self.concentration.shape[-1]
        onehot = MS.ops.one_hot(self.concentration.argmax(-1), k, MS.Tensor(1.0, mode.dtype), MS.Tensor(0.0, mode.dtype))
        return MS.ops.where(mask.expand_dims(-1), onehot, mode)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, keepdims=True)
        return self.concentration * (c0 - self.concentration) / (c0 ** 2 * (c0 + 1))

    def rsample(self, sample_shape=()):
        g = self._gamma(self._extended_shape(sample_shape), self.concentration)
        return g / g.sum(-1, keepdims=True)

    def log_prob(self, value):
        value = self._value(value, self.concentration)
        c = self.concentration
        return (MS.ops.log(value) * (c - 1.0)).sum(-1) + MS.ops.lgamma(c.sum(-1)) - MS.ops.lgamma(c).sum(-1)

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (MS.ops.lgamma(c).sum(-1) - MS.ops.lgamma(a0) - (k - a0) * MS.ops.digamma(a0)
                - ((c - 1.0) * MS.ops.digamma(c)).sum(-1))

    def kl_divergence(self, q):
        sp = self.concentration.sum(-1)
        sq = q.concentration.sum(-1)
        t1 = MS.ops.lgamma(sp) - MS.ops.lgamma(sq)
        t2 = (MS.ops.lgamma(self.concentration) - MS.ops.lgamma(q.concentration)).sum(-1)
        t3 = self.concentration - q.concentration
        t4 = MS.ops.digamma(self.concentration) - MS.ops.digamma(sp).expand_dims(-1)
        return t1 - t2 + (t3 * t4).sum(-1)
'''

SOURCES["MultivariateNormal"] = '''
class NAME(BASE):
    """PyTorch's MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            tril = scale_tril
        elif covariance_matrix is not None:
            tril = MS.ops.cholesky(covariance_matrix)
        else:
            tril = MS.ops.cholesky(MS.ops.inverse(precision_matrix))
        batch = self._shape(tril.shape[:-2], loc.shape[:-1])
        d = loc.shape[-1]
        self.loc = MS.ops.broadcast_to(loc, batch + (d,))
        self._unbroadcasted_scale_tril = tril
        self.scale_tril = MS.ops.broadcast_to(tril, batch + (d, d))
        super().__init__(batch, (d,))

    @property
    def covariance_matrix(self):
        return MS.ops.matmul(self.scale_tril, self.scale_tril.swapaxes(-1, -2))

    @property
    def precision_matrix(self):
        return MS.ops.inverse(self.covariance_matrix)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return MS.ops.broadcast_to((self._unbroadcasted_scale_tril ** 2).sum(-1), self.loc.shape)

    def _half_log_det(self):
        return MS.ops.log(MS.ops.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)).sum(-1)

    def _solve(self, tril, x):
        """tril^-1 @ x for vectors x (the last axis)."""
        return MS.ops.matmul(MS.ops.inverse(tril), x.expand_dims(-1)).squeeze(-1)

    def rsample(self, sample_shape=()):
        eps = self._normal(sample_shape, self.loc)
        return self.loc + MS.ops.matmul(self._unbroadcasted_scale_tril, eps.expand_dims(-1)).squeeze(-1)

    def log_prob(self, value):
        diff = self._value(value, self.loc) - self.loc
        m = (self._solve(self._unbroadcasted_scale_tril, diff) ** 2).sum(-1)
        d = self.loc.shape[-1]
        return -0.5 * (d * 1.8378770664093453 + m) - self._half_log_det()

    def entropy(self):
        d = self.loc.shape[-1]
        h = 0.5 * d * 2.8378770664093453 + self._half_log_det()
        return MS.ops.broadcast_to(h, self.batch_shape) if self.batch_shape else h

    def kl_divergence(self, q):
        d = self.loc.shape[-1]
        qinv = MS.ops.inverse(q._unbroadcasted_scale_tril)
        term2 = (MS.ops.matmul(qinv, self._unbroadcasted_scale_tril) ** 2).sum((-2, -1))
        term3 = (self._solve(q._unbroadcasted_scale_tril, q.loc - self.loc) ** 2).sum(-1)
        return q._half_log_det() - self._half_log_det() + 0.5 * (term2 + term3 - d)
'''

SOURCES["Independent"] = '''
class NAME(BASE):
    """PyTorch's Independent(base_distribution, reinterpreted_batch_ndims): the base
    distribution's rightmost batch axes become event axes (sums of log_prob/entropy)."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        self.base_dist = base_distribution = self._wrap(base_distribution)
        self.reinterpreted_batch_ndims = n = reinterpreted_batch_ndims
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:])

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def _sum(self, x):
        n = self.reinterpreted_batch_ndims
        return x.sum(tuple(range(-n, 0))) if n else x

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return self._sum(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum(self.base_dist.entropy())

    def kl_divergence(self, q):
        return self._sum(self.base_dist.kl_divergence(q.base_dist))
'''

SOURCES["TransformedDistribution"] = '''
class NAME(BASE):
    """PyTorch's TransformedDistribution(base_distribution, transforms) for elementwise
    transforms: samples are pushed through the transforms, log_prob pulls values back."""

    def __init__(self, base_distribution, transforms, validate_args=None):
        self.base_dist = base_distribution = self._wrap(base_distribution)
        self.transforms = [transforms] if not isinstance(transforms, (list, tuple)) else list(transforms)
        super().__init__(base_distribution.batch_shape, base_distribution.event_shape)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        y = value
        lp = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            lp = lp - t.log_abs_det_jacobian(x, y)
            y = x
        return lp + self.base_dist.log_prob(y)

    def _sign(self):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        return sign

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        value = self.base_dist.cdf(value)
        return value if self._sign() == 1 else 1 - value

    def icdf(self, value):
        value = value if self._sign() == 1 else 1 - value
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
'''

TRANSFORM_BASE = '''
class NAME:
    """PyTorch's torch.distributions.transforms.Transform interface (elementwise, bijective)."""

    sign = 1

    def __init__(self, cache_size=0):
        # PyTorch caches the last (x, y) pair; values are the same without it
        self.cache_size = cache_size

    def __call__(self, x):
        return self._call(x)

    @property
    def inv(self):
        return self._inverse

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape
'''

TRANSFORMS = {}
TRANSFORMS["ExpTransform"] = '''
class NAME(TBASE):
    """PyTorch's ExpTransform: y = exp(x)."""

    def _call(self, x):
        return MS.ops.exp(x)

    def _inverse(self, y):
        return MS.ops.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x
'''
TRANSFORMS["AffineTransform"] = '''
class NAME(TBASE):
    """PyTorch's AffineTransform(loc, scale): y = loc + scale * x (elementwise)."""

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        if event_dim:
            raise NotImplementedError("AffineTransform with event_dim > 0 is not written out")
        self.loc, self.scale = loc, scale

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return MS.ops.sign(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, (int, float)):
            return MS.ops.full_like(x, __import__("math").log(abs(scale)))
        return MS.ops.broadcast_to(MS.ops.log(MS.ops.abs(scale)), x.shape)
'''
TRANSFORMS["SigmoidTransform"] = '''
class NAME(TBASE):
    """PyTorch's SigmoidTransform: y = sigmoid(x) (clipped away from 0 and 1)."""

    def _call(self, x):
        eps = 1.1920928955078125e-07 if x.dtype == MS.float32 else 2.220446049250313e-16
        return MS.ops.clamp(MS.ops.sigmoid(x), min=eps, max=1 - eps)

    def _inverse(self, y):
        eps = 1.1920928955078125e-07 if y.dtype == MS.float32 else 2.220446049250313e-16
        y = MS.ops.clamp(y, min=eps, max=1 - eps)
        return MS.ops.log(y) - MS.ops.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -MS.ops.softplus(-x) - MS.ops.softplus(x)
'''
TRANSFORMS["TanhTransform"] = '''
class NAME(TBASE):
    """PyTorch's TanhTransform: y = tanh(x)."""

    def _call(self, x):
        return MS.ops.tanh(x)

    def _inverse(self, y):
        return MS.ops.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (0.6931471805599453 - x - MS.ops.softplus(-2.0 * x))
'''
TRANSFORMS["AbsTransform"] = '''
class NAME(TBASE):
    """PyTorch's AbsTransform: y = |x| (its inverse is y itself, as in PyTorch)."""

    def _call(self, x):
        return MS.ops.abs(x)

    def _inverse(self, y):
        return y
'''
TRANSFORMS["PowerTransform"] = '''
class NAME(TBASE):
    """PyTorch's PowerTransform(exponent): y = x ** exponent."""

    def __init__(self, exponent, cache_size=0):
        self.exponent = exponent

    @property
    def sign(self):
        if isinstance(self.exponent, (int, float)):
            return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0
        return MS.ops.sign(self.exponent)

    def _call(self, x):
        return MS.ops.pow(x, self.exponent)

    def _inverse(self, y):
        return MS.ops.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        e = self.exponent
        return MS.ops.log(MS.ops.abs(e * y / x)) if isinstance(e, MS.Tensor) else MS.ops.log(MS.ops.abs(e * y / x))
'''
TRANSFORMS["ComposeTransform"] = '''
class NAME(TBASE):
    """PyTorch's ComposeTransform(parts): the parts applied in order."""

    def __init__(self, parts, cache_size=0):
        self.parts = list(parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return MS.ops.zeros_like(x)
        total = 0.0
        for p in self.parts:
            y = p(x)
            total = total + p.log_abs_det_jacobian(x, y)
            x = y
        return total
'''

SOURCES["HalfNormal"] = '''
class NAME(BASE):
    """PyTorch's HalfNormal(scale): |Normal(0, scale)|, computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, scale, validate_args=None):
        (self.scale,) = self._tensors(scale)
        super().__init__(self.scale.shape)

    @property
    def mean(self):
        return self.scale * 0.7978845608028654

    @property
    def mode(self):
        return MS.ops.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 0.6366197723675814)

    def rsample(self, sample_shape=()):
        return MS.ops.abs(self.scale * self._normal(sample_shape, self.scale))

    def log_prob(self, value):
        value = self._value(value, self.scale)
        lp = -(value ** 2) / (2 * self.scale ** 2) - MS.ops.log(self.scale) - 0.9189385332046727 + 0.6931471805599453
        return MS.ops.where(value >= 0, lp, MS.ops.full_like(lp, float("-inf")))

    def cdf(self, value):
        value = self._value(value, self.scale)
        return 2 * (0.5 * (1 + MS.ops.erf(value / (self.scale * 2 ** 0.5)))) - 1

    def icdf(self, prob):
        p = (self._value(prob, self.scale) + 1) / 2
        return self.scale * MS.ops.erfinv(2 * p - 1) * 2 ** 0.5

    def entropy(self):
        return 1.4189385332046727 + MS.ops.log(self.scale) - 0.6931471805599453
'''

SOURCES["HalfCauchy"] = '''
class NAME(BASE):
    """PyTorch's HalfCauchy(scale): |Cauchy(0, scale)|, computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, scale, validate_args=None):
        (self.scale,) = self._tensors(scale)
        super().__init__(self.scale.shape)

    @property
    def mean(self):
        return MS.ops.full_like(self.scale, float("inf"))

    @property
    def mode(self):
        return MS.ops.zeros_like(self.scale)

    @property
    def variance(self):
        return MS.ops.full_like(self.scale, float("inf"))

    def rsample(self, sample_shape=()):
        return self.icdf(self._uniform(sample_shape, self.scale))

    def log_prob(self, value):
        value = self._value(value, self.scale)
        lp = (-MS.ops.log(MS.Tensor(3.141592653589793, self.scale.dtype)) - MS.ops.log(self.scale)
              - MS.ops.log1p((value / self.scale) ** 2) + 0.6931471805599453)
        return MS.ops.where(value >= 0, lp, MS.ops.full_like(lp, float("-inf")))

    def cdf(self, value):
        value = self._value(value, self.scale)
        return 2 * (MS.ops.atan(value / self.scale) / 3.141592653589793 + 0.5) - 1

    def icdf(self, prob):
        p = (self._value(prob, self.scale) + 1) / 2
        return MS.ops.tan(3.141592653589793 * (p - 0.5)) * self.scale

    def entropy(self):
        return 2.5310242469692907 + MS.ops.log(self.scale) - 0.6931471805599453
'''

SOURCES["Weibull"] = '''
class NAME(BASE):
    """PyTorch's Weibull(scale, concentration), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = self._tensors(scale, concentration)
        super().__init__(self.scale.shape)

    @property
    def mean(self):
        return self.scale * MS.ops.exp(MS.ops.lgamma(1 + 1 / self.concentration))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** (1 / k)

    @property
    def variance(self):
        k = self.concentration
        return self.scale ** 2 * (MS.ops.exp(MS.ops.lgamma(1 + 2 / k)) - MS.ops.exp(2 * MS.ops.lgamma(1 + 1 / k)))

    def rsample(self, sample_shape=()):
        return self.icdf(self._uniform(sample_shape, self.scale))

    def log_prob(self, value):
        y = self._value(value, self.scale) / self.scale
        k = self.concentration
        return MS.ops.log(k / self.scale) + (k - 1) * MS.ops.log(y) - y ** k

    def cdf(self, value):
        y = self._value(value, self.scale) / self.scale
        return 1 - MS.ops.exp(-(y ** self.concentration))

    def icdf(self, value):
        p = self._value(value, self.scale)
        return self.scale * (-MS.ops.log1p(-p)) ** (1 / self.concentration)

    def entropy(self):
        k = self.concentration
        return 0.5772156649015329 * (1 - 1 / k) + MS.ops.log(self.scale / k) + 1
'''

SOURCES["Pareto"] = '''
class NAME(BASE):
    """PyTorch's Pareto(scale, alpha), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = self._tensors(scale, alpha)
        super().__init__(self.scale.shape)

    @property
    def mean(self):
        a = MS.ops.clamp(self.alpha, min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = MS.ops.clamp(self.alpha, min=2)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    def rsample(self, sample_shape=()):
        return self.icdf(self._uniform(sample_shape, self.scale))

    def log_prob(self, value):
        value = self._value(value, self.scale)
        return MS.ops.log(self.alpha) + self.alpha * MS.ops.log(self.scale) - (self.alpha + 1) * MS.ops.log(value)

    def cdf(self, value):
        return 1 - (self.scale / self._value(value, self.scale)) ** self.alpha

    def icdf(self, value):
        return self.scale * (1 - self._value(value, self.scale)) ** (-1 / self.alpha)

    def entropy(self):
        return MS.ops.log(self.scale / self.alpha) + 1 / self.alpha + 1
'''

SOURCES["FisherSnedecor"] = '''
class NAME(BASE):
    """PyTorch's FisherSnedecor(df1, df2), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = self._tensors(df1, df2)
        super().__init__(self.df1.shape)

    @property
    def mean(self):
        d2 = self.df2
        return MS.ops.where(d2 > 2, d2 / (d2 - 2), MS.ops.full_like(d2, float("nan")))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1
        mode = MS.ops.where(mode > 0, mode, MS.ops.full_like(mode, float("nan")))
        return mode * self.df2 / (self.df2 + 2)

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        v = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
        return MS.ops.where(d2 > 4, v, MS.ops.full_like(v, float("nan")))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = 2 * self._gamma(shape, 0.5 * self.df1) / self.df1
        x2 = 2 * self._gamma(shape, 0.5 * self.df2) / self.df2
        return x1 / x2

    def log_prob(self, value):
        value = self._value(value, self.df1)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = MS.ops.lgamma(ct1 + ct2) - MS.ops.lgamma(ct1) - MS.ops.lgamma(ct2)
        t2 = ct1 * MS.ops.log(ct3) + (ct1 - 1) * MS.ops.log(value)
        t3 = (ct1 + ct2) * MS.ops.log1p(ct3 * value)
        return t1 + t2 - t3
'''

SOURCES["Kumaraswamy"] = '''
class NAME(BASE):
    """PyTorch's Kumaraswamy(concentration1, concentration0), computed with MindSpore ops."""

    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = self._tensors(concentration1, concentration0)
        super().__init__(self.concentration1.shape)

    def _moment(self, n):
        a, b = self.concentration1, self.concentration0
        arg1 = 1 + n / a
        return MS.ops.exp(MS.ops.log(b) + MS.ops.lgamma(arg1) + MS.ops.lgamma(b) - MS.ops.lgamma(arg1 + b))

    @property
    def mean(self):
        return self._moment(1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # PyTorch's own expression (NaN wherever concentration0 > 1, as in PyTorch)
        log_mode = (1 / b) * MS.ops.log1p(-b) - MS.ops.log1p(-b * a)
        log_mode = MS.ops.where((b < 1) | (a < 1), MS.ops.full_like(log_mode, float("nan")), log_mode)
        return MS.ops.exp(log_mode)

    @property
    def variance(self):
        return self._moment(2) - self._moment(1) ** 2

    def rsample(self, sample_shape=()):
        u = self._uniform(sample_shape, self.concentration1)
        return (1 - u ** (1 / self.concentration0)) ** (1 / self.concentration1)

    def log_prob(self, value):
        x = self._value(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return MS.ops.log(a) + MS.ops.log(b) + (a - 1) * MS.ops.log(x) + (b - 1) * MS.ops.log1p(-(x ** a))

    def entropy(self):
        t1 = 1 - 1 / self.concentration1
        t0 = 1 - 1 / self.concentration0
        h0 = MS.ops.digamma(self.concentration0 + 1) + 0.5772156649015329
        return t0 + t1 * h0 - MS.ops.log(self.concentration1) - MS.ops.log(self.concentration0)
'''

SOURCES["NegativeBinomial"] = '''
class NAME(BASE):
    """PyTorch's NegativeBinomial(total_count, probs=None, logits=None), computed with MindSpore ops."""
''' + _LOGITS + '''
    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        probs, logits = self._from(probs, logits, True)
        self.total_count, self.probs, self.logits = self._tensors(
            total_count if isinstance(total_count, MS.Tensor) else float(total_count), probs, logits)
        self.total_count = self.total_count.astype(self.probs.dtype)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.total_count * MS.ops.exp(self.logits)

    @property
    def mode(self):
        return MS.ops.clamp(MS.ops.floor((self.total_count - 1) * MS.ops.exp(self.logits)), min=0.0)

    @property
    def variance(self):
        return self.mean / MS.ops.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = self._gamma(shape, self.total_count) * MS.ops.exp(self.logits)
        out = MS.ops.random_poisson(MS.Tensor((), MS.int64), rate.astype(MS.float32))
        return out.astype(self.probs.dtype).reshape(shape)

    def log_prob(self, value):
        value = self._value(value, self.probs)
        n = self.total_count
        unnormalized = n * MS.ops.logsigmoid(-self.logits) + value * MS.ops.logsigmoid(self.logits)
        normalization = -MS.ops.lgamma(n + value) + MS.ops.lgamma(1.0 + value) + MS.ops.lgamma(n)
        normalization = MS.ops.where(n + value == 0.0, MS.ops.zeros_like(normalization), normalization)
        return unnormalized - normalization
'''

SOURCES["OneHotCategorical"] = '''
class NAME(BASE):
    """PyTorch's OneHotCategorical(probs=None, logits=None), computed with MindSpore ops."""
''' + _LOGITS + '''
    def __init__(self, probs=None, logits=None, validate_args=None):
        probs, logits = self._from(probs, logits, False)
        self.probs = probs
        self.logits = logits - MS.ops.logsumexp(logits, -1, True)
        super().__init__(self.probs.shape[:-1], self.probs.shape[-1:])

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        k = self.probs.shape[-1]
        return MS.ops.one_hot(self.probs.argmax(-1), k, MS.Tensor(1.0, self.probs.dtype), MS.Tensor(0.0, self.probs.dtype))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        k = self.probs.shape[-1]
        n = int(MS.ops.ones(tuple(sample_shape)).size)
        draws = MS.ops.multinomial(self.probs.reshape((-1, k)).astype(MS.float32), n, True)
        draws = draws.transpose(1, 0).reshape(tuple(sample_shape) + self.batch_shape)
        return MS.ops.one_hot(draws.astype(MS.int32), k, MS.Tensor(1.0, self.probs.dtype), MS.Tensor(0.0, self.probs.dtype))

    def log_prob(self, value):
        value = self._value(value, self.probs)
        return (value * self.logits).sum(-1)

    def entropy(self):
        logits = MS.ops.clamp(self.logits, min=float(-3.4028234663852886e38 if self.logits.dtype == MS.float32 else -1.7976931348623157e308))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        k = self.probs.shape[-1]
        values = MS.ops.eye(k, k, self.probs.dtype).reshape((k,) + (1,) * len(self.batch_shape) + (k,))
        return MS.ops.broadcast_to(values, (k,) + self.batch_shape + (k,)) if expand else values
'''

TRANSFORMS["SoftmaxTransform"] = '''
class NAME(TBASE):
    """PyTorch's SoftmaxTransform: y = softmax(x) over the last axis (not bijective: the
    inverse is log y, no log-Jacobian)."""

    def _call(self, x):
        logprobs = x
        probs = MS.ops.exp(logprobs - logprobs.max(-1, keepdims=True))
        return probs / probs.sum(-1, keepdims=True)

    def _inverse(self, y):
        return MS.ops.log(y)
'''
TRANSFORMS["SoftplusTransform"] = '''
class NAME(TBASE):
    """PyTorch's SoftplusTransform: y = log(1 + exp(x))."""

    def _call(self, x):
        return MS.ops.softplus(x)

    def _inverse(self, y):
        return MS.ops.log(-MS.ops.expm1(-y)) + y

    def log_abs_det_jacobian(self, x, y):
        return -MS.ops.softplus(-x)
'''

SOURCES["MixtureSameFamily"] = '''
class NAME(BASE):
    """PyTorch's MixtureSameFamily(mixture_distribution, component_distribution): a
    Categorical over the rightmost batch axis of the components, computed with MindSpore ops."""

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = comp = self._wrap(component_distribution)
        shape = tuple(comp.batch_shape)
        self._event_ndims = len(comp.event_shape)
        super().__init__(shape[:-1], comp.event_shape)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _log_mix(self):
        mix = self._mixture_distribution
        logits = getattr(mix, "logits", None)
        if logits is None:  # MindSpore's Categorical keeps probs only
            return MS.ops.log(mix.probs)
        return MS.ops.log_softmax(logits, -1)

    def _mix_probs(self):
        p = MS.ops.exp(self._log_mix())
        return p.reshape(p.shape + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._mix_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        p = self._mix_probs()
        axis = -1 - self._event_ndims
        comp = self._component_distribution
        mean_cond_var = (p * comp.variance).sum(axis)
        var_cond_mean = (p * (comp.mean - self.mean.expand_dims(axis)) ** 2).sum(axis)
        return mean_cond_var + var_cond_mean

    def _pad(self, x):
        return x.expand_dims(-1 - self._event_ndims)

    def log_prob(self, x):
        lp = self._component_distribution.log_prob(self._pad(self._value(x, self._log_mix())))
        return MS.ops.logsumexp(lp + self._log_mix(), -1)

    def cdf(self, x):
        c = self._component_distribution.cdf(self._pad(self._value(x, self._log_mix())))
        return (c * MS.ops.exp(self._log_mix())).sum(-1)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        comp = self._component_distribution.sample(sample_shape)
        idx = self._mixture_distribution.sample(sample_shape).astype(MS.int32)
        k = comp.shape[len(sample_shape) + len(self.batch_shape)]
        onehot = MS.ops.one_hot(idx, k, MS.Tensor(1.0, comp.dtype), MS.Tensor(0.0, comp.dtype))
        onehot = onehot.reshape(onehot.shape + (1,) * self._event_ndims)
        return (comp * onehot).sum(-1 - self._event_ndims)
'''
