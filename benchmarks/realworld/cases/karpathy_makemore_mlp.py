import torch
import torch.nn.functional as F

# %%
# read in all the words
# Generated stand-in for names.txt (32033 lowercase names): 300 names over the letters a-z
syllables = ['ka', 'le', 'mi', 'no', 'ra', 'sa', 'ty', 'ju', 'bo', 'de', 'fi', 'ge', 'ha', 'qu', 'vi', 'wo', 'xe', 'ze', 'pa', 'an', 'el', 'is', 'ol', 'cy']
words = ['emma', 'olivia', 'ava', 'isabella', 'sophia'] + [syllables[i % 24] + syllables[i // 24 % 24] + syllables[7 * i % 24] * (i % 4 == 0) for i in range(295)]
words[:8]

# %%
len(words)

# %%
# build the vocabulary of characters and mappings to/from integers
chars = sorted(list(set(''.join(words))))
stoi = {s:i+1 for i,s in enumerate(chars)}
stoi['.'] = 0
itos = {i:s for s,i in stoi.items()}
print(itos)

# %%
# build the dataset

block_size = 3 # context length: how many characters do we take to predict the next one?
X, Y = [], []
for w in words[:5]:
  
  #print(w)
  context = [0] * block_size
  for ch in w + '.':
    ix = stoi[ch]
    X.append(context)
    Y.append(ix)
    #print(''.join(itos[i] for i in context), '--->', itos[ix])
    context = context[1:] + [ix] # crop and append
  
X = torch.tensor(X)
Y = torch.tensor(Y)

# %%
X.shape, X.dtype, Y.shape, Y.dtype

# %%
# build the dataset
block_size = 3 # context length: how many characters do we take to predict the next one?

def build_dataset(words):  
  X, Y = [], []
  for w in words:

    #print(w)
    context = [0] * block_size
    for ch in w + '.':
      ix = stoi[ch]
      X.append(context)
      Y.append(ix)
      #print(''.join(itos[i] for i in context), '--->', itos[ix])
      context = context[1:] + [ix] # crop and append

  X = torch.tensor(X)
  Y = torch.tensor(Y)
  print(X.shape, Y.shape)
  return X, Y

import random
random.seed(42)
random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))

Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])


# %%
C = torch.randn((27, 2))

# %%
emb = C[X]
emb.shape

# %%
W1 = torch.randn((6, 100))
b1 = torch.randn(100)

# %%
h = torch.tanh(emb.view(-1, 6) @ W1 + b1)

# %%
h

# %%
h.shape

# %%
W2 = torch.randn((100, 27))
b2 = torch.randn(27)

# %%
logits = h @ W2 + b2

# %%
logits.shape

# %%
counts = logits.exp()

# %%
prob = counts / counts.sum(1, keepdims=True)

# %%
prob.shape

# %%
loss = -prob[torch.arange(32), Y].log().mean()
loss

# %%
# ------------ now made respectable :) ---------------

# %%
Xtr.shape, Ytr.shape # dataset

# %%
g = torch.Generator().manual_seed(2147483647) # for reproducibility
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]

# %%
sum(p.nelement() for p in parameters) # number of parameters in total

# %%
for p in parameters:
  p.requires_grad = True

# %%
lre = torch.linspace(-3, 0, 1000)
lrs = 10**lre

# %%
lri = []
lossi = []
stepi = []

# %%
for i in range(100):
  
  # minibatch construct
  ix = torch.randint(0, Xtr.shape[0], (32,))
  
  # forward pass
  emb = C[Xtr[ix]] # (32, 3, 10)
  h = torch.tanh(emb.view(-1, 30) @ W1 + b1) # (32, 200)
  logits = h @ W2 + b2 # (32, 27)
  loss = F.cross_entropy(logits, Ytr[ix])
  #print(loss.item())
  
  # backward pass
  for p in parameters:
    p.grad = None
  loss.backward()
  
  # update
  #lr = lrs[i]
  lr = 0.1 if i < 100000 else 0.01
  for p in parameters:
    p.data += -lr * p.grad

  # track stats
  #lri.append(lre[i])
  stepi.append(i)
  lossi.append(loss.log10().item())

#print(loss.item())

# %%
emb = C[Xtr] # (32, 3, 2)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1) # (32, 100)
logits = h @ W2 + b2 # (32, 27)
loss = F.cross_entropy(logits, Ytr)
loss

# %%
emb = C[Xdev] # (32, 3, 2)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1) # (32, 100)
logits = h @ W2 + b2 # (32, 27)
loss = F.cross_entropy(logits, Ydev)
loss

# %%
# training split, dev/validation split, test split
# 80%, 10%, 10%

# %%
context = [0] * block_size
C[torch.tensor([context])].shape

# %%


# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)

for _ in range(20):
    
    out = []
    context = [0] * block_size # initialize with all ...
    while True:
      emb = C[torch.tensor([context])] # (1,block_size,d)
      h = torch.tanh(emb.view(1, -1) @ W1 + b1)
      logits = h @ W2 + b2
      probs = F.softmax(logits, dim=1)
      ix = torch.multinomial(probs, num_samples=1, generator=g).item()
      context = context[1:] + [ix]
      out.append(ix)
      if ix == 0:
        break
    
    print(''.join(itos[i] for i in out))
